/**
 * @module
 * The starter registries a tenant can begin with (`--registry NAME`). `note` is added to every set by
 * `registry.ts`. Plain data; no logic.
 */
import type { PredicateDef } from '../store/registry-store.ts';

const p = (
  name: string,
  cardinality: PredicateDef['cardinality'],
  valueType: PredicateDef['valueType'],
  description: string,
  extra: Partial<PredicateDef> = {},
): PredicateDef => ({ name, cardinality, valueType, description, ...extra });

/** Starter registries by name. */
export const STARTER_REGISTRIES: Readonly<Record<string, readonly PredicateDef[]>> = Object.freeze({
  coding: [
    p('prefers', 'multi', 'string', 'a stated preference (tools, style, conventions)', { aliases: ['preference'] }),
    p('favorite_color', 'single', 'string', 'the colour someone likes best', { aliases: ['favourite_color'] }),
    p('language', 'multi', 'string', 'a programming language used', { aliases: ['programming_language'] }),
    p('editor', 'single', 'string', 'the editor or IDE in use'),
    p('code_style', 'single', 'enum', 'indentation style', { allowed: ['tabs', 'spaces'] }),
    p('test_command', 'single', 'string', 'the command that runs the tests'),
    p('build_command', 'single', 'string', 'the command that builds the project'),
    p('repository', 'single', 'string', 'where the code lives'),
    p('default_branch', 'single', 'string', 'the main branch name'),
    p('depends_on', 'multi', 'ref', 'another subject this one depends on'),
    p('owner', 'single', 'ref', 'who owns this subject'),
    p('ci_green', 'single', 'boolean', 'whether CI passes'),
    p('deadline', 'single', 'date', 'when it is due'),
    p('open_issues', 'single', 'number', 'how many issues are open'),
  ],
  support: [
    p('customer_tier', 'single', 'enum', 'support tier', { allowed: ['free', 'pro', 'enterprise'] }),
    p('product', 'multi', 'string', 'a product the customer uses'),
    p('open_ticket', 'multi', 'string', 'an open ticket id'),
    p('sentiment', 'single', 'enum', 'latest mood', { allowed: ['positive', 'neutral', 'negative'] }),
    p('contact_email', 'single', 'string', 'where to reach them', { aliases: ['email'] }),
    p('account_manager', 'single', 'ref', 'who manages the account'),
    p('last_contact', 'single', 'date', 'when we last spoke'),
    p('escalated', 'single', 'boolean', 'whether the case is escalated'),
  ],
  sales: [
    p('stage', 'single', 'enum', 'deal stage', {
      allowed: ['lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost'],
    }),
    p('deal_value', 'single', 'number', 'value of the deal'),
    p('decision_maker', 'multi', 'ref', 'who decides'),
    p('competitor', 'multi', 'string', 'a competitor in the deal'),
    p('close_date', 'single', 'date', 'expected close date'),
    p('company', 'single', 'string', 'the company of a contact'),
  ],
  voice: [
    p('name', 'single', 'string', 'what the caller is called'),
    p('preferred_language', 'single', 'string', 'the spoken language to use'),
    p('speaking_rate', 'single', 'enum', 'how fast to speak', { allowed: ['slow', 'normal', 'fast'] }),
    p('callback_number', 'single', 'string', 'number to call back'),
    p('consent_recording', 'single', 'boolean', 'whether the caller agreed to recording'),
  ],
  personal: [
    p('name', 'single', 'string', 'what someone is called'),
    p('prefers', 'multi', 'string', 'a stated preference', { aliases: ['preference'] }),
    p('favorite_color', 'single', 'string', 'the colour someone likes best', { aliases: ['favourite_color'] }),
    p('lives_in', 'single', 'string', 'the city someone lives in', { aliases: ['city'] }),
    p('birthday', 'single', 'date', 'date of birth'),
    p('knows', 'multi', 'ref', 'another person they know'),
    p('allergy', 'multi', 'string', 'something they are allergic to'),
    p('timezone', 'single', 'string', 'IANA time zone'),
  ],
});
