/**
 * @module
 * The package entry (`import { TetherClient } from 'tether'`): the agent SDK and its types, nothing else.
 * Re-exports only; the code lives in the files named here. Imports only `sdk/` and `common/errors.ts`,
 * so importing the package loads no server code (no Fastify, no drivers).
 *
 * @example
 * ```ts
 * import { TetherClient, TetherError } from 'tether';
 * const memory = TetherClient.fromKey({ url: 'http://127.0.0.1:8080', key: process.env.TETHER_KEY! });
 * await memory.remember({ subject: 'user', predicate: 'prefers', value: 'dark mode' });
 * ```
 */
export { ERROR_STATUS, type ErrorCode, isTetherError, TetherError, type TetherErrorOptions } from '../common/errors.ts';
export { AgentHandle, type AgentHandleEvents } from './agent-handle.ts';
export { type ClientOptions, errorOf, type ResumeOptions, TetherClient } from './client.ts';
export { type KeyProvider, staticKey, type WorkloadKeyOptions, workloadKey } from './credentials.ts';
export type * from './resume-types.ts';
export type * from './types.ts';
