// The alerts page's form read into the API's create body (contract/alerts.ts createRuleBody), so a
// rule made in the console is checked exactly as one made through the API; each refusal said in
// the form's own words (its labels, the address that is wrong). Pure: no request, no database.
import { createRuleBody } from '../../contract/alerts.ts';
import type { RuleInput } from '../../domain/alerts/rules/rules.ts';
import type { AlertFormValues } from '../views/alerts.ts';

export type AlertFormFields = Partial<Record<keyof AlertFormValues | 'slack', string | undefined>>;

/** The form as typed, for the page to show again (the Slack URL is not: it is a secret). */
export const formValues = (f: AlertFormFields): AlertFormValues => ({
  name: f.name ?? '',
  when: f.when ?? 'new_group',
  events: f.events ?? '',
  window: f.window ?? '',
  q: f.q ?? '',
  emails: f.emails ?? '',
  snooze: f.snooze ?? '',
});

const splitAddresses = (s: string): string[] => s.split(/[\s,;]+/).filter(Boolean);

/** A form field as a number when it is one; as typed otherwise (the schema then says so). */
const numberOf = (s: string | undefined): number | string | undefined =>
  !s?.trim() ? undefined : /^\s*\d{1,9}\s*$/.test(s) ? Number(s) : s;

/** The body the form asks for, before the schema reads it. */
function bodyOf(f: AlertFormFields, emails: string[]): Record<string, unknown> {
  const slack = f.slack?.trim();
  const when = f.when ?? '';
  const events = numberOf(f.events);
  const window = numberOf(f.window);
  return {
    name: f.name ?? '',
    when,
    // The threshold's fields stay on the form whatever the kind; only a frequency rule sends them.
    ...(when === 'frequency' && (events !== undefined || window !== undefined)
      ? { threshold: { events, window_minutes: window } }
      : {}),
    q: f.q ?? '',
    actions: [
      ...(emails.length ? [{ type: 'email', to: emails }] : []),
      ...(slack ? [{ type: 'slack', url: slack }] : []),
    ],
    ...(numberOf(f.snooze) !== undefined ? { snooze_minutes: numberOf(f.snooze) } : {}),
  };
}

const labels: [RegExp, string][] = [
  [/^name/, 'Name'],
  [/^when/, 'When'],
  [/^threshold\.events/, 'Events'],
  [/^threshold\.window_minutes/, 'Within minutes'],
  [/^threshold/, 'Threshold'],
  [/^q/, 'Only errors matching'],
  [/^actions\.\d+\.to/, 'Email addresses'],
  [/^actions\.\d+\.url/, 'Slack incoming-webhook URL'],
  [/^snooze_minutes/, 'Quiet minutes per error group'],
];

/** A refusal of field `path` (the API's, less its `body.`) in the form's words. */
export function problemOf(path: string, message: string, emails: readonly string[]): string {
  const address = /^actions\.\d+\.to\.(\d+)$/.exec(path);
  if (address) return `Email addresses: ${emails[Number(address[1])] ?? ''} is not a valid address.`;
  const label = labels.find(([re]) => re.test(path))?.[1];
  return label ? `${label}: ${message}` : message;
}

/** The rule the form describes, or why not (one line per problem). */
export function readAlertForm(f: AlertFormFields): { rule: RuleInput; problems?: never } | { problems: string[] } {
  const emails = splitAddresses(f.emails ?? '');
  if (emails.length === 0 && !f.slack?.trim())
    return { problems: ['Say whom to tell: email addresses, a Slack incoming-webhook URL, or both.'] };
  const parsed = createRuleBody.safeParse(bodyOf(f, emails));
  if (parsed.success) return { rule: parsed.data };
  return { problems: parsed.error.issues.map((i) => problemOf(i.path.join('.'), i.message, emails)) };
}
