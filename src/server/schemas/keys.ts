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
