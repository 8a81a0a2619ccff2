/**
 * @module
 * Creating a session's SandboxClaim, or taking over the one already there: a claim of the same service and
 * session (a gateway restart, a second gateway) is the session's own and is used as it is; one of someone
 * else is refused; our own previous instance's claim still being deleted is waited for, then made again.
 * Used by `kubernetes-runtime.ts`.
 */
import { SANDBOX_CLAIM } from '../../kube/agent-sandbox.ts';
import { KubeRequestError } from '../../kube/errors.ts';
import type { ObjectClient } from '../../kube/object-client.ts';
import type { KubeResource } from '../../kube/types.ts';
import { LABELS } from './objects.ts';

/** What `createOrTakeOver` needs. */
export interface ClaimCreateOptions {
  client: ObjectClient;
  namespace: string;
  /** The claim as `claimFor` builds it. */
  body: KubeResource;
  /** True while an instance of this runtime still holds a claim of that name. */
  held: () => boolean;
  /** Resolves once `held()` is false (rejects on its timeout). */
  released: () => Promise<unknown>;
}

/**
 * The claim, and whether this call made it (false: an existing claim of the same session was taken over).
 * @throws Error when a claim of that name belongs to someone else, or ours is still being deleted
 */
export async function createOrTakeOver(o: ClaimCreateOptions): Promise<{ claim: KubeResource; created: boolean }> {
  const name = o.body.metadata.name;
  const want = o.body.metadata.labels ?? {};
  for (let attempt = 0; ; attempt++) {
    try {
      return { claim: await o.client.create(SANDBOX_CLAIM, o.namespace, o.body), created: true };
    } catch (err) {
      if (!(err instanceof KubeRequestError) || err.failure !== 'conflict') throw err;
    }
    const existing = await o.client.get(SANDBOX_CLAIM, o.namespace, name);
    if (!existing) continue; // deleted meanwhile: create again
    const labels = existing.metadata.labels ?? {};
    const ours =
      labels[LABELS.service] === want[LABELS.service] && labels[LABELS.sessionHash] === want[LABELS.sessionHash];
    if (!ours) throw new Error(`sandboxclaim ${name} exists and belongs to someone else`);
    if (!o.held() && !existing.metadata.deletionTimestamp) return { claim: existing, created: false };
    // Our previous instance of this session is still being deleted: wait until it is gone, then create.
    if (attempt >= 1) throw new Error(`sandboxclaim ${name} is still being deleted`);
    await o.released();
  }
}
