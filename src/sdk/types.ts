/**
 * @module
 * Wire types of the memory HTTP API as the SDK sees them (snake_case, ISO times, null for absent values).
 */

/** A scalar fact value. */
export type FactValue = string | number | boolean;

/** One statement to remember. */
export interface StatementInput {
  subject: string;
  predicate: string;
  value: FactValue;
  kind?: string | null;
  /** 0..1. @default 1 */
  confidence?: number;
  source?: string | null;
  /** ISO 8601 or epoch ms; may be back-dated, at most 60 s ahead. @default now */
  observed_at?: string | number;
  evidence?: string | null;
}

/** Who wrote an event. */
export interface ActorJson {
  tenant: string;
  agent: string | null;
  session: string | null;
  key_id: string | null;
}

/** One stored event. */
/** Which page of a fact's history (`MemoryClient.history`). */
export interface HistoryOptions {
  namespace?: string;
  /** Events per page, 1..1000. @default 100 */
  limit?: number;
  /** The `next` of the page before. */
  cursor?: string;
}

export interface EventJson {
  id: string;
  namespace: string;
  subject: string;
  predicate: string;
  value: FactValue | null;
  value_key: string | null;
  retraction: boolean;
  kind: string | null;
  confidence: number;
  source: string | null;
  evidence: string | null;
  observed_at: string;
  recorded_at: string;
  actor: ActorJson;
}

/** What one remember did. */
export interface RememberResultJson {
  stored: boolean;
  already_known: boolean;
  superseded: FactValue[];
  event: EventJson | null;
}

/** A current belief. */
export interface BeliefJson {
  subject: string;
  predicate: string;
  value: FactValue;
  kind: string | null;
  confidence: number;
  source: string | null;
  observed_at: string;
  event_id: string;
  replaced: { value: FactValue; observed_at: string }[];
}

/** What a recall asks. */
export interface RecallInput {
  subject?: string;
  predicate?: string;
  /** Text search. */
  q?: string;
  /** ISO 8601 or epoch ms. */
  as_of?: string | number;
  limit?: number;
  min_confidence?: number;
  kind?: string;
  namespace?: string;
}

/** `GET /v1/whoami`. */
export interface WhoamiJson {
  key_id: string;
  tenant: string;
  agent: string | null;
  session: string | null;
  namespace: string | null;
  admin: boolean;
  expires_at: string | null;
}

/** `POST /v1/auth/kubernetes`. */
export interface ExchangeJson {
  key: string;
  expires_at: string;
  tenant: string;
  agent: string;
  session: string;
  namespace: string;
}

/** One predicate. */
export interface PredicateJson {
  name: string;
  cardinality: 'single' | 'multi';
  value_type: 'string' | 'number' | 'boolean' | 'enum' | 'date' | 'ref';
  allowed?: string[] | null;
  aliases?: string[];
  description?: string | null;
}
