/**
 * @module
 * The memory-target workload of bench:memory: 10 s each of exact recall, text search and remember,
 * each with 8 clients, against a server just loaded over HTTP; the caller reads the server's RSS
 * before and after and its peak (VmHWM). Recall keys and queries come from the dataset's sample.
 */
import { type LoadRequest, runLoad } from './http-load.ts';
import { type MemoryDataset, recallRequest } from './memory-data.ts';

/** Runs the three phases; returns requests done per phase and any failures. */
export async function stressPhases(
  url: string,
  key: string,
  dataset: MemoryDataset,
  wl: { keys: { subject: string; predicate: string }[]; queries: string[][] },
  o: { clients: number; seconds: number },
): Promise<{ recall: number; search: number; remember: number; errors: number }> {
  const headers = { authorization: `Bearer ${key}` };
  const run = (request: (i: number) => LoadRequest) =>
    runLoad({ url, headers, concurrency: o.clients, maxRequests: 10_000_000, maxMs: o.seconds * 1000, request });
  const recall = await run((i) => recallRequest(wl.keys[i % wl.keys.length]!));
  const search = await run((i) => ({
    method: 'GET',
    path: `/v1/memories?q=${encodeURIComponent(wl.queries[i % wl.queries.length]!.join(' '))}`,
  }));
  const remember = await run((i) => ({
    method: 'POST',
    path: '/v1/memories',
    body: { subject: dataset.randomSubject(), predicate: 'note', value: `${dataset.words(5)} stress${i}` },
  }));
  return {
    recall: recall.requests,
    search: search.requests,
    remember: remember.requests,
    errors: recall.errors + search.errors + remember.errors,
  };
}
