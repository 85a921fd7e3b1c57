// An environment's scrubbing policy as the API shows it (contract/errors.ts), with every default
// rule named for reference.
import type { ScrubbingPolicy, ScrubbingPolicyResource } from '../../../contract/errors.ts';
import { defaultRuleNames } from '../../../contract/scrubbing.ts';

export const policyView = (
  envName: string,
  policy: ScrubbingPolicy,
  updateTime: Date | null,
): ScrubbingPolicyResource => ({
  name: `${envName}/scrubbing_policy`,
  policy,
  default_rules: [...defaultRuleNames, 'sensitive_key'],
  ...(updateTime ? { update_time: new Date(updateTime).toISOString() } : {}),
});
