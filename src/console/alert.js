// The console's one error line above the page (role=alert). A 401 from any call signs the user out.
import { ApiError } from './api.js';

const box = document.getElementById('alert');
let onUnauthenticated = () => {};

/** What to do when the server refuses the credential (set by app.js). */
export function whenUnauthenticated(fn) {
  onUnauthenticated = fn;
}

/** Shows an error (an ApiError with its status and code); null hides it. */
export function showError(err) {
  if (!err) {
    box.hidden = true;
    return;
  }
  box.textContent = err instanceof ApiError ? `${err.message} (${err.status} ${err.code})` : String(err.message ?? err);
  box.hidden = false;
  if (err instanceof ApiError && err.status === 401) onUnauthenticated();
}
