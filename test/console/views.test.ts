// Every console page's view is a pure function of its data (no request, no clock, no database):
// golden HTML for each, from fixture rows, including the states a page can be in (empty, read-only,
// a conflict, a refusal, running and finished), and that every value is escaped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StackFrame } from '../../src/domain/errors/pipeline/symbolicate.ts';
import { html } from '../../src/html/html.ts';
import { alertsView, emptyAlertForm, type AlertsData } from '../../src/console/views/alerts.ts';
import { backupsView, type BackupsData } from '../../src/console/views/backups.ts';
import { errorPageView, lacksScopeView } from '../../src/console/views/error-page.ts';
import { bulkActions, outcomeQuery, readOutcome } from '../../src/console/views/bulk.ts';
import { errorSorts, errorStates, errorsView, type ErrorsData } from '../../src/console/views/errors.ts';
import { eventPageView } from '../../src/console/views/event-page.ts';
import { stackFrames } from '../../src/console/views/frames.ts';
import { groupView, type GroupData } from '../../src/console/views/group.ts';
import { layout } from '../../src/console/views/layout.ts';
import { linkPage } from '../../src/console/views/link.ts';
import { landingView } from '../../src/console/views/landing.ts';
import { docNotFoundView, docsListView, docView } from '../../src/console/views/docs.ts';
import { liveProgress, operationView, type OperationData } from '../../src/console/views/operation.ts';
import { signInView } from '../../src/console/views/sign-in.ts';
import { userView, usersView, type UserData, type UsersData } from '../../src/console/views/users.ts';
import { confirmView } from '../../src/console/views/user-actions.ts';
import { golden } from './golden.ts';

const t = (iso: string) => new Date(iso);
const now = t('2026-11-26T15:04:05Z');
const csrf = 'csrf-token-of-the-page';
const view = (name: string, h: { value: string }) => golden(`views/${name}.html`, h.value + '\n');
const counts = [0, 0, 3, 1, 0, 0, 0, 12, 40, 7, 0, 0, 1, 2];

const errorsData: ErrorsData = {
  state: errorStates[0]!,
  service: undefined,
  q: '',
  sort: errorSorts[0]!,
  now,
  nextToken: 'eyJ0IjoiMjAyNi0xMS0yNlQxNDowMDowMC4wMDBaIiwiaWQiOiJlZ18xIn0.c2lnbmF0dXJl',
  groups: [
    {
      id: 'eg_01jdq0000000000000000000aa',
      title: 'TypeError: cannot read <properties> of undefined',
      culprit: 'src/cart.ts in addItem',
      service_name: 'shop',
      occurrence_count: '1204',
      user_count: 37,
      first_seen_time: t('2026-11-02T09:30:00Z'),
      last_seen_time: t('2026-11-26T14:59:00Z'),
      state: 'unresolved',
      etag: 'e1"<x>',
      daily: counts,
    },
    {
      id: 'eg_01jdq0000000000000000000ab',
      title: 'RangeError: Invalid array length',
      culprit: 'src/billing.ts in invoice',
      service_name: 'billing & co',
      occurrence_count: 1,
      user_count: 0,
      first_seen_time: t('2026-11-20T08:00:00Z'),
      last_seen_time: t('2026-11-20T08:00:00Z'),
      state: 'unresolved',
      etag: 'e2',
      daily: new Array<number>(14).fill(0),
    },
    {
      id: 'eg_01jdq0000000000000000000ac',
      title: 'Error: no service',
      culprit: '',
      service_name: '',
      occurrence_count: 3,
      user_count: 1,
      first_seen_time: t('2026-11-19T07:00:00Z'),
      last_seen_time: t('2026-11-19T08:00:00Z'),
      state: 'unresolved',
      etag: 'e3',
      daily: new Array<number>(14).fill(0),
    },
  ],
  listQuery: 'state=unresolved&after=x%26y',
  csrf,
  writable: true,
};

const frames: StackFrame[] = [
  {
    function: 'processTicksAndRejections',
    file: 'node:internal/process/task_queues',
    line: 95,
    column: 5,
    in_app: false,
  },
  { function: 'vendorInit', file: 'https://shop.example.com/vendor.js', line: 1, column: 99, in_app: false },
  {
    function: 'applyCoupon',
    file: 'src/checkout.ts',
    line: 4,
    column: 3,
    in_app: true,
    pre_context: ['export function applyCoupon(code: string) {', '  // the coupon must exist'],
    context_line: '  throw new CheckoutError(code);',
    post_context: ['}'],
    generated: { function: 'a', file: 'https://shop.example.com/min.js', line: 1, column: 15 },
  },
  {
    function: 'renderWithHooks',
    file: 'node_modules/react-dom/cjs/react-dom.development.js',
    line: 14985,
    column: 18,
    in_app: false,
    generated: { function: 'Ua', file: 'https://shop.example.com/min.js', line: 1, column: 802 },
  },
  {
    function: undefined,
    file: 'https://shop.example.com/other.js',
    line: 1,
    column: 7,
    in_app: true,
    unmapped_reason: 'no_map_for_file',
  },
] as StackFrame[];

/** A server's stack with no release: nothing mapped, for one reason; no frame in app. */
const serverFrames: StackFrame[] = [
  {
    function: 'Layer.handle',
    file: '/srv/app/node_modules/express/lib/router/layer.js',
    line: 95,
    column: 5,
    in_app: false,
    unmapped_reason: 'no_release',
  },
  {
    function: 'handle',
    file: '/srv/app/src/server.js',
    line: 42,
    column: 7,
    in_app: false,
    unmapped_reason: 'no_release',
    pre_context: [],
    context_line: '    return renderUser(req.user);',
  },
] as StackFrame[];

const userEvent = (n: number, user: Record<string, unknown> | undefined) => ({
  uid: `err_c001jdq00000000000000000${n}a`,
  event_time: t(`2026-11-26T1${4 - n}:00:00Z`),
  body: {
    exception_type: 'CheckoutError',
    message: 'coupon SPRING is unknown',
    release: n === 2 ? undefined : 'shop@1.0.0',
    sentry: user ? { user } : undefined,
  },
});

const groupData: GroupData = {
  group: {
    id: 'eg_01jdq0000000000000000000aa',
    title: 'CheckoutError: coupon SPRING is unknown',
    culprit: 'src/checkout.ts in applyCoupon',
    state: 'unresolved',
    etag: 'W7x',
    occurrence_count: '3',
    first_seen_time: t('2026-11-20T10:00:00Z'),
    last_seen_time: t('2026-11-26T14:00:00Z'),
    service_name: 'shop',
    last_release: 'shop@1.0.0',
  },
  daily: counts,
  now,
  latest: {
    uid: 'err_c001jdq00000000000000000aa',
    event_time: t('2026-11-26T14:00:00Z'),
    body: {
      sentry: { user: { id: 42, email: 'ada@example.com', username: 'ada', ip_address: '203.0.113.7', segment: 'x' } },
      exception_type: 'CheckoutError',
      message: 'coupon SPRING is unknown',
      release: 'shop@1.0.0',
      stack_frames: frames,
      linked_exceptions: [
        {
          source: 'cause',
          exception_type: 'LookupError',
          message: 'no row',
          stack_frames: [],
          unparsed_line_count: 0,
        },
      ],
      tags: { plan: 'pro', region: 'eu-<west>' },
      breadcrumbs: [
        { timestamp: '2026-11-26T13:59:58Z', category: 'ui.click', message: 'clicked Apply coupon' },
        { type: 'navigation' },
      ],
    },
  },
  tags: [
    {
      key: 'browser',
      total: 12,
      values: [
        { value: 'Chrome 131', count: 7 },
        { value: 'Firefox <133>', count: 3 },
        { value: 'Safari 18', count: 1 },
      ],
    },
    { key: 'plan', total: 400, values: [{ value: 'pro', count: 399 }] },
  ],
  events: [
    userEvent(0, { id: 42, email: 'ada@example.com' }),
    userEvent(1, { ip_address: '203.0.113.7' }),
    userEvent(2, undefined),
  ],
  nextToken: 'eyJ0IjoiMjAyNi0xMS0yNlQxMjowMDowMC4wMDBaIiwiaWQiOiJlcnJfYyJ9.c2ln',
  firstPage: true,
  csrf,
  writable: true,
  conflict: false,
};

const backupsData: BackupsData = {
  backups: [
    {
      id: 'backup_01jdq000000000000000000aa',
      type: 'manual',
      state: 'succeeded',
      error: null,
      size_bytes: '3221225',
      create_time: t('2026-11-26T03:00:00Z'),
    },
    {
      id: 'backup_01jdq000000000000000000ab',
      type: 'daily',
      state: 'failed',
      error: 'pg_dump exited with 1',
      size_bytes: null,
      create_time: t('2026-11-25T03:00:00Z'),
    },
    {
      id: 'backup_01jdq000000000000000000ac',
      type: 'daily',
      state: 'running',
      error: null,
      size_bytes: null,
      create_time: t('2026-11-24T03:00:00Z'),
    },
  ],
  shown: 50,
  envs: ['orgs/acme/projects/shop/envs/prod', 'orgs/acme/projects/shop/envs/staging'],
  csrf,
  writable: true,
  notice: 'Backup backup_01jdq000000000000000000aa started; it runs below.',
};

const operation = (o: Partial<OperationData['op']>): OperationData => ({
  targetName: 'orgs/acme/projects/shop/envs/staging',
  op: {
    id: 'op_01jdq0000000000000000000aa',
    kind: 'restore',
    backup_id: 'backup_01jdq000000000000000000aa',
    pre_backup_id: null,
    state: 'running',
    phase: 'restoring',
    bytes_read: '1048576',
    bytes_total: '3221225',
    error: null,
    create_time: t('2026-11-26T15:00:00Z'),
    ...o,
  },
});

const ada = {
  id: 'eu_01jdq0000000000000000000aa',
  email: 'ada@example.com',
  email_verified_time: t('2026-11-01T09:00:00Z'),
  create_time: t('2026-11-01T08:59:00Z'),
  last_sign_in_time: t('2026-11-26T12:00:00Z'),
  totp_active: true,
  locked_time: null,
};
const bob = {
  id: 'eu_01jdq0000000000000000000ab',
  email: 'bob+"quotes"@example.com',
  email_verified_time: null,
  create_time: t('2026-11-02T08:00:00Z'),
  last_sign_in_time: null,
  totp_active: false,
  locked_time: t('2026-11-25T10:00:00Z'),
};
const usersData: UsersData = { users: [bob, ada], email: undefined, nextToken: 'tok.sig', csrf, writable: true };
const userData: UserData = {
  user: ada,
  sessions: [
    {
      id: 'sess_01jdq0000000000000000000aa',
      state: 'active',
      method: 'password',
      create_time: t('2026-11-26T12:00:00Z'),
      last_active_time: t('2026-11-26T14:30:00Z'),
      ip: '203.0.113.7',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64)',
    },
    {
      id: 'sess_01jdq0000000000000000000ab',
      state: 'revoked',
      method: 'totp',
      create_time: t('2026-11-20T12:00:00Z'),
      last_active_time: t('2026-11-20T12:05:00Z'),
      ip: null,
      user_agent: null,
    },
  ],
  signIns: [
    {
      time: t('2026-11-26T12:00:00Z'),
      method: 'password',
      outcome: 'succeeded',
      ip: '203.0.113.7',
      user_agent: 'curl/8',
    },
  ],
  shown: 20,
  notice: '2 sessions revoked.',
  csrf,
  writable: true,
};

const alertsData: AlertsData = {
  rules: [
    {
      rule: {
        id: 'alr_01jdq0000000000000000000aa',
        name: 'Checkout <bursts> & co',
        when: 'frequency',
        threshold: { events: 1000, window_minutes: 60 },
        q: 'service:checkout browser:"Mobile <Safari>"',
        actions: [
          { type: 'email', to: ['oncall@example.com', 'bob+"quotes"@example.com'] },
          { type: 'slack', url: 'https://hooks.slack.com/…Xy7Q' },
        ],
        snooze_minutes: 30,
        state: 'enabled',
        create_time: '2026-11-20T08:00:00.000Z',
        update_time: '2026-11-20T08:00:00.000Z',
      },
      last: { time: t('2026-11-26T14:59:00Z'), groupId: 'eg_01jdq0000000000000000000aa', title: 'TypeError: <x>' },
    },
    {
      rule: {
        id: 'alr_01jdq0000000000000000000ab',
        name: 'New groups',
        when: 'new_group',
        actions: [{ type: 'email', to: ['team@example.com'] }],
        snooze_minutes: 0,
        state: 'disabled',
        create_time: '2026-11-21T08:00:00.000Z',
        update_time: '2026-11-21T08:00:00.000Z',
      },
      last: undefined,
    },
  ],
  csrf,
  writable: true,
  form: emptyAlertForm,
  notice: 'Rule alr_01jdq0000000000000000000ab created.',
};

describe('console views', () => {
  it('errors: groups with their charts, filters, checkboxes and the next page; nothing found', () => {
    view('errors', errorsView(errorsData));
    view(
      'errors-empty',
      errorsView({ ...errorsData, state: errorStates[1]!, service: 'billing', groups: [], nextToken: undefined }),
    );
  });

  it('errors: the answer of a bulk action (changes, stale and refused groups named); read-only; none selected', () => {
    const [first, second] = errorsData.groups;
    view(
      'errors-bulk',
      errorsView({
        ...errorsData,
        state: errorStates[3]!,
        groups: [{ ...first!, state: 'resolved' }, second!],
        report: {
          action: 'resolve',
          changed: 2,
          stale: [{ id: second!.id, title: second!.title }],
          refused: [{ id: first!.id, title: first!.title, state: 'resolved' }],
          gone: 1,
        },
      }),
    );
    view(
      'errors-read-only',
      errorsView({
        ...errorsData,
        writable: false,
        report: { action: 'reopen', changed: 0, stale: [], refused: [], gone: 0 },
      }),
    );
  });

  it('errors: a search and an order kept by every link; none found; a refused search in an alert', () => {
    const q = 'browser:"Mobile <Safari>" !level:warning & co';
    view('errors-search', errorsView({ ...errorsData, state: errorStates[3]!, q, sort: errorSorts[2]! }));
    view(
      'errors-search-none',
      errorsView({ ...errorsData, q, sort: errorSorts[3]!, groups: [], nextToken: undefined }),
    );
    view(
      'errors-search-refused',
      errorsView({
        ...errorsData,
        q: 'browser:"<b>',
        groups: [],
        nextToken: undefined,
        searchError: 'The search is not valid: term "browser:\\"<b>": the quote is not closed',
      }),
    );
  });

  it('group: the triage form, chart and latest event; read-only after a conflict; pruned', () => {
    view('group', groupView(groupData));
    view(
      'group-conflict',
      groupView({
        ...groupData,
        group: { ...groupData.group, state: 'acknowledged' },
        writable: false,
        conflict: true,
      }),
    );
    view('group-pruned', groupView({ ...groupData, latest: undefined, tags: [], events: [], nextToken: undefined }));
    view('group-older-events', groupView({ ...groupData, nextToken: undefined, firstPage: false }));
  });

  it('frames: library runs folded, the reasons they were not mapped said once; a stack with none in app whole', () => {
    view('frames', stackFrames(frames));
    view('frames-server', stackFrames(serverFrames));
    // Mixed reasons are counted, and an unmapped frame among mapped ones is marked.
    const mixed = [...frames, { ...serverFrames[0]!, unmapped_reason: 'no_maps_for_release' as const }];
    expect(stackFrames(mixed).value).toContain(
      '<p class="muted unmapped">2 of 6 frames not mapped: no source map of this release is for this file (1); no source maps were uploaded for this release (1).</p>',
    );
    expect(stackFrames(mixed).value.match(/class="tag">not mapped</g)).toHaveLength(2);
  });

  it('event page: the event with its user, newer and older links; the newest, with only an IP address', () => {
    const group = groupData.group;
    view('event-page', eventPageView({ group, event: groupData.latest!, newer: 'err_c0n', older: 'err_c0o' }));
    const event = {
      ...groupData.latest!,
      body: { ...groupData.latest!.body, sentry: { user: { ip_address: '203.0.113.7' } }, stack_frames: serverFrames },
    };
    view('event-page-newest', eventPageView({ group, event, newer: undefined, older: 'err_c0o' }));
  });

  it('backups: the list with restore forms and a notice; read-only and empty with a refusal', () => {
    view('backups', backupsView(backupsData));
    view(
      'backups-empty',
      backupsView({ ...backupsData, backups: [], writable: false, notice: undefined, error: 'A backup is running.' }),
    );
  });

  it('operation: running with its progress, succeeded, failed', () => {
    view('operation-running', operationView(operation({})));
    view(
      'operation-succeeded',
      operationView(
        operation({ state: 'succeeded', phase: 'done', pre_backup_id: 'backup_01jdq000000000000000000ad' }),
      ),
    );
    view(
      'operation-failed',
      operationView(operation({ state: 'failed', error: { code: 'restore_failed', message: 'the target refused' } })),
    );
  });

  it('users: the list, a search that found nobody (read-only); one user with sessions and sign-ins; confirmations', () => {
    view('users', usersView(usersData));
    view('users-empty', usersView({ ...usersData, users: [], email: 'nobody@example.com', writable: false }));
    view('user', userView(userData));
    view(
      'user-read-only',
      userView({ ...userData, user: bob, sessions: [], signIns: [], notice: undefined, writable: false }),
    );
    view(
      'user-confirm-delete',
      confirmView({ user: bob, action: 'delete', csrf, error: 'The confirmation does not match.' }),
    );
    view('user-confirm-lock', confirmView({ user: ada, action: 'lock', csrf }));
  });

  it('alerts: rules with their last firing and the form; read-only and empty; a refusal keeping what was typed', () => {
    view('alerts', alertsView(alertsData));
    view('alerts-empty', alertsView({ ...alertsData, rules: [], writable: false, notice: undefined }));
    view(
      'alerts-refused',
      alertsView({
        ...alertsData,
        notice: undefined,
        form: { ...emptyAlertForm, name: 'Bursts "x"', when: 'frequency', events: '10', window: '', emails: 'a@b' },
        problems: [
          'Within minutes: Invalid input: expected number, received undefined',
          'Email addresses: a@b is not a valid address.',
        ],
      }),
    );
  });

  it('sign-in, sign-in links, refusals and the layout around a page', () => {
    view('sign-in', signInView({ csrf }));
    view('sign-in-error', signInView({ csrf, error: 'That key does not open the console.' }));
    view('link', linkPage({ token: 'cairn_clink_x', csrf, linkEnv: 'orgs/a/projects/b/envs/c' }));
    view(
      'link-switch',
      linkPage({
        token: 'cairn_clink_x',
        csrf,
        linkEnv: 'orgs/a/projects/b/envs/c',
        currentEnv: 'orgs/a/projects/b/envs/c',
      }),
    );
    view('error-page', errorPageView(404, 'There is no such error group in this environment.'));
    view('lacks-scope', lacksScopeView('Errors', 'observability:read'));
    const page = layout({
      title: 'Errors',
      nonce: 'bm9uY2U=',
      stylesheet: '/console/static/console.0123456789abcdef.css',
      body: html`<h1>Errors</h1>`,
      signedIn: { envName: 'orgs/a/projects/b/envs/c', csrf, section: 'errors' },
      script: liveProgress,
    });
    golden('views/layout.html', page + '\n');
    golden(
      'views/layout-signed-out.html',
      layout({ title: 'Sign in', nonce: 'n', stylesheet: '/s.css', body: html`<h1>Sign in</h1>` }) + '\n',
    );
  });

  it('the landing page, the documents and one of them (its markup as text), in the site layout', () => {
    view('landing', landingView());
    const list = [
      { name: 'api.md', title: 'The Cairn HTTP API' },
      { name: 'architecture/console.md', title: 'The console' },
    ];
    view('docs', docsListView(list));
    view('docs-none', docsListView([]));
    view('doc-not-found', docNotFoundView());
    const doc = docView({
      name: 'api.md',
      title: 'The Cairn HTTP API',
      text: '# The Cairn HTTP API\n\n## Errors\n\nA <script>alert(1)</script> & `code`.\n',
    });
    expect(doc.value).not.toContain('<script>');
    expect(doc.value).not.toContain('# The Cairn HTTP API');
    view('doc', doc);
    golden(
      'views/layout-site.html',
      layout({ title: 'Docs', nonce: 'n', stylesheet: '/s.css', body: html`<h1>Docs</h1>`, site: 'docs' }) + '\n',
    );
  });

  it('escapes every value it is given', () => {
    const out =
      errorsView(errorsData).value +
      usersView(usersData).value +
      groupView(groupData).value +
      alertsView(alertsData).value;
    expect(out).toContain('cannot read &#60;properties&#62; of undefined');
    expect(out).toContain('billing &#38; co');
    expect(out).toContain('bob+&#34;quotes&#34;@example.com');
    expect(out).toContain('Firefox &#60;133&#62;');
    expect(out).toContain('Checkout &#60;bursts&#62; &#38; co');
    expect(out).not.toMatch(/<properties>|"quotes"|<133>|<bursts>|<Safari>|<x>/);
  });

  it("reads back a bulk action's outcome from its redirect's query, and nothing but ids and bounded counts from any query", () => {
    const id = fc.stringMatching(/^eg_[0-9a-z]{26}$/);
    const outcome = fc.record({
      action: fc.constantFrom(...bulkActions.map(([a]) => a)),
      changed: fc.integer({ min: 0, max: 100 }),
      stale: fc.uniqueArray(id, { maxLength: 100 }),
      refused: fc.uniqueArray(id, { maxLength: 100 }),
      gone: fc.integer({ min: 0, max: 100 }),
    });
    fc.assert(
      fc.property(outcome, (o) => {
        expect(readOutcome(new URLSearchParams(outcomeQuery(o)))).toEqual(o);
      }),
    );
    fc.assert(
      fc.property(fc.string(), (query) => {
        const o = readOutcome(new URLSearchParams(query));
        if (!o) return;
        for (const n of [o.changed, o.gone]) expect(n >= 0 && n <= 100).toBe(true);
        for (const x of [...o.stale, ...o.refused]) expect(x).toMatch(/^eg_[0-9a-z]{26}$/);
      }),
    );
  });
});
