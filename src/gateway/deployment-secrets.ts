/**
 * @module
 * The gateway's per-deployment secrets: the claim secret (keys agent/claim names: keep it, or returning
 * sessions lose their memory) and the session secret (signs session keys). Each comes from its
 * environment variable, else from a file in the gateway's data folder, generated there on first start
 * (0600). Several gateway replicas of one deployment must share them. Used by `tether gateway` and `tether up`.
 */
import { join } from 'node:path';
import { checkSecret, loadOrCreateSecret } from '../common/secret-file.ts';

/** The secrets and the files this call generated. */
export interface DeploymentSecrets {
  claimSecret: string;
  sessionSecret: string;
  /** Paths of secret files generated now (first start). */
  created: string[];
}

/**
 * Loads (or generates) the gateway's secrets.
 * @param dataDir the gateway's data folder (`claim.secret`, `session.secret`)
 * @param env `TETHER_CLAIM_SECRET`, `TETHER_SESSION_SECRET` override the files
 * @throws {Error} when a given secret is shorter than 32 characters
 */
export function loadDeploymentSecrets(dataDir: string, env: NodeJS.ProcessEnv = process.env): DeploymentSecrets {
  const created: string[] = [];
  const pick = (name: string, fileName: string): string => {
    const given = env[name];
    if (given) return checkSecret(given, name);
    const file = join(dataDir, fileName);
    const s = loadOrCreateSecret(file);
    if (s.created) created.push(file);
    return s.value;
  };
  return {
    claimSecret: pick('TETHER_CLAIM_SECRET', 'claim.secret'),
    sessionSecret: pick('TETHER_SESSION_SECRET', 'session.secret'),
    created,
  };
}
