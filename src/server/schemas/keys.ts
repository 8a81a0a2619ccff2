/**
 * @module
 * Request schemas of the key and identity routes.
 */
import { z } from 'zod';
import { queryInt } from './common.ts';

const name = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9._-]{0,126}[a-z0-9])?$/, { message: 'must be a lower-case name (a-z, 0-9, ., _, -)' });

/** `POST /v1/keys` body. */
export const createKeyBody = z.strictObject({
  tenant: z.union([name, z.literal('*')]),
  agent: name.nullish(),
  ttl_seconds: z
    .number()
    .int()
    .min(1)
    .max(10 * 365 * 24 * 3600)
    .nullish(),
  note: z.string().max(256).nullish(),
});

/** `DELETE /v1/keys/{id}` params. */
export const keyParams = z.strictObject({
  id: z.string().regex(/^[0-9a-f]{16}$/, { message: 'must be a 16-hex key id' }),
});

/** `POST /v1/auth/kubernetes` body. */
export const kubernetesAuthBody = z.strictObject({
  token: z.string().min(1).max(16384),
});

/** `GET /v1/keys` query: pages in creation order; expired keys only when asked. */
export const listKeysQuery = z.strictObject({
  limit: queryInt(1, 1000).optional(),
  after: z
    .string()
    .regex(/^[0-9a-f]{16}$/, { message: 'must be a 16-hex key id' })
    .optional(),
  include_expired: z.enum(['true', 'false']).optional(),
});

/** A key as listed (never its secret). */
export const keyAnswer = z.object({
  id: z.string(),
  tenant: z.string(),
  agent: z.string().nullable(),
  session: z.string().nullable(),
  namespace: z.string().nullable(),
  admin: z.boolean(),
  note: z.string().nullable(),
  created_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});

/** `GET /v1/keys` answer; `next` is the `after` of the next page, null on the last. */
export const listKeysAnswer = z.object({ keys: z.array(keyAnswer), next: z.string().nullable() });

/** `POST /v1/keys` answer: the only time the key itself is shown. */
export const mintKeyAnswer = z.object({
  id: z.string(),
  key: z.string(),
  tenant: z.string(),
  agent: z.string().nullable(),
  namespace: z.string().nullable(),
  expires_at: z.string().nullable(),
});

/** `GET /v1/whoami` answer. */
export const whoamiAnswer = z.object({
  key_id: z.string(),
  tenant: z.string(),
  agent: z.string().nullable(),
  session: z.string().nullable(),
  namespace: z.string().nullable(),
  admin: z.boolean(),
  expires_at: z.string().nullable(),
});

/** `POST /v1/auth/kubernetes` answer. */
export const exchangeAnswer = z.object({
  key: z.string(),
  expires_at: z.string().nullable(),
  tenant: z.string(),
  agent: z.string(),
  session: z.string(),
  namespace: z.string(),
});
