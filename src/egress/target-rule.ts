// Which addresses an environment's outgoing requests may reach: its webhook targets, its own social
// provider's endpoints, and any other URL a key holder names that the service then calls. None may
// reach the service's own network (server-side request forgery, OWASP SSRF Prevention Cheat Sheet):
// its Postgres, its object store, cloud metadata at 169.254.169.254, the service itself. Otherwise
// a key holder could aim requests there and read the service's network from how each attempt failed.
//
// Live environments: https, public unicast addresses only, always. Test environments: http or
// https, and private addresses only where the operator allows them with CAIRN_PRIVATE_TARGETS. A
// laptop's receiver on localhost needs them (`npm start`, tests: allow), while on a hosted service
// a test key is handed out as freely as a live one and is no more trusted (NODE_ENV=production:
// deny unless set). A rule that admits only public addresses is checked when the URL is set and
// again on every connection, on the DNS answer the socket connects to (egress/addresses.ts).
import type { Config } from '../config.ts';

export interface TargetRule {
  /** Plain http is refused (live environments). */
  httpsOnly: boolean;
  /** Only public unicast addresses (egress/addresses.ts isPublicAddress), by name or number. */
  publicOnly: boolean;
  /** Why, for the message of a refused target: which rule refused it, and who sets it. */
  because: string;
}

type RuleConfig = Pick<Config, 'NODE_ENV' | 'CAIRN_PRIVATE_TARGETS'>;

/** The operator's switch, with its default: `deny` under NODE_ENV=production, else `allow`. */
export const privateTargets = (config: RuleConfig): 'allow' | 'deny' =>
  config.CAIRN_PRIVATE_TARGETS ?? (config.NODE_ENV === 'production' ? 'deny' : 'allow');

const live: TargetRule = {
  httpsOnly: true,
  publicOnly: true,
  because: 'a live environment reaches only public addresses, over https',
};
const publicTest: TargetRule = {
  httpsOnly: false,
  publicOnly: true,
  because: 'this service keeps test environments to public addresses too (CAIRN_PRIVATE_TARGETS=deny)',
};
const anyTest: TargetRule = { httpsOnly: false, publicOnly: false, because: '' };

/** The rule for an environment of `mode` under this configuration. */
export function targetRule(config: RuleConfig, mode: 'test' | 'live'): TargetRule {
  if (mode === 'live') return live;
  return privateTargets(config) === 'deny' ? publicTest : anyTest;
}
