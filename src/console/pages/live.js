// Live updates of a page: calls `refresh` now and every `ms` (polling the admin API; the tables are small),
// shows its errors, and stops when the page is left. Re-renders only when the data changed, so focus stays.
import { showError } from '../alert.js';

export function poll(refresh, ms = 2000) {
  let last = '';
  let stopped = false;
  const tick = async () => {
    try {
      const data = await refresh.load();
      const text = JSON.stringify(data);
      if (!stopped && text !== last) {
        last = text;
        await refresh.render(data);
      }
    } catch (err) {
      if (!stopped) showError(err);
    }
  };
  tick();
  const timer = setInterval(tick, ms);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
    /** Renders again at the next tick even if nothing changed (after a local toggle). */
    again() {
      last = '';
      tick();
    },
  };
}
