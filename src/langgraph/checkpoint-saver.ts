/**
 * @module
 * `TetherCheckpointSaver`: a LangGraph checkpointer (`BaseCheckpointSaver`) that keeps checkpoints and
 * pending writes in the memory server as resume records of the agent's namespace (one thread_id /
 * checkpoint_ns space per namespace). Every write goes through the SDK's agent handle, so it is fenced
 * by the agent's lease: once another copy of the agent takes the lease, this saver's writes reject
 * with `lease_lost` and store nothing. Reads need no lease. Values are serialised by the saver's serde
 * and stored as base64; the server never looks inside. Whole checkpoints are stored (as `MemorySaver`
 * does), not per-channel deltas.
 *
 * @example
 * ```ts
 * import { TetherCheckpointSaver } from 'tether/langgraph';
 * const checkpointer = new TetherCheckpointSaver({ url: process.env.TETHER_URL!, key: process.env.TETHER_KEY! });
 * const graph = builder.compile({ checkpointer });
 * await graph.invoke(input, { configurable: { thread_id: 'job-42' } });
 * await checkpointer.close(); // releases the lease it took
 * ```
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import type { AgentHandle } from '../sdk/agent-handle.ts';
import type { CheckpointJson, PendingWriteJson, SerializedJson } from '../sdk/checkpoint-types.ts';
import { TetherClient } from '../sdk/client.ts';

/** How the saver takes and keeps the lease, when it takes it itself. */
export interface SaverLeaseOptions {
  /** The agent namespace. @default the key's own */
  namespace?: string;
  /** Lease holder name. @default the key's session, else `key:<id>` */
  holder?: string;
  /** Lease life, ms; the handle renews it every third of it. @default 60000 */
  ttlMs?: number;
  /** Wait this long for a lease another holder has, ms. @default 0 (fail with `lease_held`) */
  waitMs?: number;
  /** Pause between tries while waiting, ms. @default 1000 */
  pollMs?: number;
  /** The serde. @default LangGraph's JsonPlusSerializer */
  serde?: SerializerProtocol;
}

/** Where the saver gets its server, key and lease. */
export type TetherCheckpointSaverOptions = SaverLeaseOptions &
  (
    | { url: string; key: string; fetch?: typeof fetch }
    | { url: string; tokenFile: string; fetch?: typeof fetch }
    /** A client; the saver takes the lease with it at its first write. */
    | { client: TetherClient }
    /** A client and the agent handle the agent already holds: its lease fences the saver's writes. */
    | { client: TetherClient; agent: AgentHandle }
  );

/** Checkpoints read per request while listing. */
const PAGE = 100;

function clientOf(o: TetherCheckpointSaverOptions): TetherClient {
  if ('client' in o) return o.client;
  if ('key' in o) return TetherClient.fromKey({ url: o.url, key: o.key, fetch: o.fetch });
  return TetherClient.fromWorkloadToken({ url: o.url, tokenFile: o.tokenFile, fetch: o.fetch });
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** A LangGraph checkpointer over a Tether memory server. */
export class TetherCheckpointSaver extends BaseCheckpointSaver {
  readonly client: TetherClient;
  readonly #lease: SaverLeaseOptions;
  readonly #ownsLease: boolean;
  #agent: Promise<AgentHandle> | null;

  constructor(options: TetherCheckpointSaverOptions) {
    super(options.serde);
    this.client = clientOf(options);
    this.#lease = 'agent' in options ? { ...options, namespace: options.agent.namespace } : options;
    this.#ownsLease = !('agent' in options);
    this.#agent = 'agent' in options ? Promise.resolve(options.agent) : null;
  }

  /** The namespace reads name (the handle's once there is one). */
  #namespace(): string | undefined {
    return this.#lease.namespace;
  }

  /** The agent handle, taking the lease at the first write; a failed take is tried again next time. */
  agent(): Promise<AgentHandle> {
    this.#agent ??= this.client
      .resume({
        namespace: this.#lease.namespace,
        holder: this.#lease.holder,
        ttlMs: this.#lease.ttlMs,
        waitMs: this.#lease.waitMs,
        pollMs: this.#lease.pollMs,
      })
      .catch((err: unknown) => {
        this.#agent = null;
        throw err;
      });
    return this.#agent;
  }

  /** Releases the lease if this saver took it (an `agent` passed in stays the caller's). */
  async close(): Promise<void> {
    if (!this.#ownsLease) return;
    const agent = this.#agent;
    this.#agent = null;
    if (agent) await (await agent.catch(() => null))?.release();
  }

  async #serialize(value: unknown): Promise<SerializedJson> {
    const [type, bytes] = await this.serde.dumpsTyped(value);
    return { type, data: toBase64(bytes) };
  }

  #deserialize(s: SerializedJson): Promise<unknown> {
    return this.serde.loadsTyped(s.type, Buffer.from(s.data, 'base64'));
  }

  async #pendingWrites(writes: PendingWriteJson[]): Promise<CheckpointPendingWrite[]> {
    const sorted = [...writes].sort((a, b) =>
      compareWritesSortKeys(writesSortKey(a.task_path, a.task_id, a.idx), writesSortKey(b.task_path, b.task_id, b.idx)),
    );
    return Promise.all(
      sorted.map(async (w) => [w.task_id, w.channel, await this.#deserialize(w.value)] as CheckpointPendingWrite),
    );
  }

  /** A stored checkpoint as a tuple; a checkpoint older than v4 gets its parent's pending sends. */
  async #tuple(c: CheckpointJson): Promise<CheckpointTuple> {
    const checkpoint = (await this.#deserialize(c.checkpoint)) as Checkpoint;
    if (checkpoint.v < 4 && c.parent_checkpoint_id !== null) await this.#migrateSends(checkpoint, c);
    const key = { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns };
    const tuple: CheckpointTuple = {
      config: { configurable: { ...key, checkpoint_id: c.checkpoint_id } },
      checkpoint,
      metadata: (await this.#deserialize(c.metadata)) as CheckpointMetadata,
      pendingWrites: await this.#pendingWrites(c.pending_writes),
    };
    if (c.parent_checkpoint_id !== null) {
      tuple.parentConfig = { configurable: { ...key, checkpoint_id: c.parent_checkpoint_id } };
    }
    return tuple;
  }

  /** Sends were pending writes of the parent before checkpoint v4: they become the TASKS channel. */
  async #migrateSends(checkpoint: Checkpoint, c: CheckpointJson): Promise<void> {
    const { pending_writes } = await this.client.checkpointWrites({
      namespace: this.#namespace(),
      thread_id: c.thread_id,
      checkpoint_ns: c.checkpoint_ns,
      checkpoint_id: c.parent_checkpoint_id as string,
    });
    const sends = (await this.#pendingWrites(pending_writes)).filter(([, channel]) => channel === TASKS);
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value);
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined) return undefined;
    const checkpointId = getCheckpointId(config);
    const { checkpoints } = await this.client.checkpoints({
      namespace: this.#namespace(),
      thread_id: String(threadId),
      checkpoint_ns: config.configurable?.checkpoint_ns ?? '',
      checkpoint_id: checkpointId || undefined,
      limit: 1,
    });
    return checkpoints[0] ? this.#tuple(checkpoints[0]) : undefined;
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter } = options;
    let left = options.limit ?? Number.POSITIVE_INFINITY;
    const threadId = config.configurable?.thread_id;
    let cursor: string | undefined;
    while (left > 0) {
      const page = await this.client.checkpoints({
        namespace: this.#namespace(),
        thread_id: threadId === undefined ? undefined : String(threadId),
        checkpoint_ns: config.configurable?.checkpoint_ns,
        checkpoint_id: config.configurable?.checkpoint_id || undefined,
        before: options.before?.configurable?.checkpoint_id || undefined,
        // With a filter, some of a page may not match: read whole pages.
        limit: filter ? PAGE : Math.min(PAGE, left),
        cursor,
      });
      for (const c of page.checkpoints) {
        if (filter) {
          const metadata = (await this.#deserialize(c.metadata)) as Record<string, unknown>;
          if (!Object.entries(filter).every(([k, v]) => metadata[k] === v)) continue;
        }
        yield await this.#tuple(c);
        if (--left <= 0) return;
      }
      if (page.next_cursor === null) return;
      cursor = page.next_cursor;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    _newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id;
    if (threadId === undefined) {
      throw new Error('Cannot put a checkpoint as config.configurable.thread_id is missing');
    }
    const key = { thread_id: String(threadId), checkpoint_ns: config.configurable?.checkpoint_ns ?? '' };
    const [serialized, meta] = await Promise.all([
      this.#serialize(copyCheckpoint(checkpoint)),
      this.#serialize(metadata),
    ]);
    await (await this.agent()).putCheckpoint({
      ...key,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: config.configurable?.checkpoint_id || null,
      checkpoint: serialized,
      metadata: meta,
    });
    return { configurable: { ...key, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const checkpointId = config.configurable?.checkpoint_id;
    if (threadId === undefined) throw new Error('Cannot put writes as config.configurable.thread_id is missing');
    if (!checkpointId) throw new Error('Cannot put writes as config.configurable.checkpoint_id is missing');
    const values = await Promise.all(
      writes.map(async ([channel, value], idx) => ({
        idx: WRITES_IDX_MAP[channel] ?? idx,
        channel,
        value: await this.#serialize(value),
      })),
    );
    await (await this.agent()).putCheckpointWrites({
      thread_id: String(threadId),
      checkpoint_ns: config.configurable?.checkpoint_ns ?? '',
      checkpoint_id: String(checkpointId),
      task_id: taskId,
      task_path: taskPath ?? '',
      writes: values,
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    await (await this.agent()).deleteCheckpointThread(threadId);
  }
}
