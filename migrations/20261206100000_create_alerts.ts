// Alerts: rules that tell a person when an error needs them (docs/api.md "Alerts").
//
// - alert_rules: an environment's rules (at most 50). `when` is new_group, regression or
//   frequency (`threshold_events` or more events of one group within `threshold_window_minutes`);
//   `q` the search language's text (empty: every group); `actions` a JSON list of
//   `{"type": "email", "to": [...]}` and `{"type": "slack", "url_sealed", "url_hint"}`: a Slack
//   incoming-webhook URL is a bearer secret (whoever holds it posts to the channel), so it is sealed
//   with CAIRN_ENCRYPTION_KEY like a webhook signing secret and shown only as its hint.
// - alert_snoozes: per rule and group, until when it stays quiet. A firing claims it with one
//   conditional upsert, so of N workers storing the same group's events at once exactly one fires.
// - alert_firings: what fired, when and why, with the facts its messages carry (kept 30 days);
//   alert_firing_actions: each action's outcome, settled by its send job (retried about an hour).
// - alert_group_minutes: events per group and minute of receipt, kept by the worker only for
//   environments with an enabled frequency rule, so a frequency check sums at most a window's
//   minutes instead of scanning events; pruned past the longest window (a day).
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('alert_rules', (t) => {
    t.text('id').primary();
    t.text('env_id').notNullable().references('envs.id').onDelete('CASCADE');
    t.text('name').notNullable();
    t.text('when').notNullable().checkIn(['new_group', 'regression', 'frequency'], 'alert_rules_when_check');
    t.integer('threshold_events');
    t.integer('threshold_window_minutes');
    t.text('q').notNullable().defaultTo('');
    t.jsonb('actions').notNullable();
    t.integer('snooze_minutes').notNullable().defaultTo(30);
    t.text('state').notNullable().defaultTo('enabled').checkIn(['enabled', 'disabled'], 'alert_rules_state_check');
    t.timestamp('create_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['env_id', 'state']);
  });
  await knex.raw(`alter table alert_rules add constraint alert_rules_threshold_check check (
    ("when" = 'frequency') = (threshold_events is not null and threshold_window_minutes is not null))`);

  await knex.schema.createTable('alert_snoozes', (t) => {
    t.text('rule_id').notNullable().references('alert_rules.id').onDelete('CASCADE');
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.timestamp('until', { useTz: true }).notNullable();
    t.primary(['rule_id', 'group_id']);
    t.index(['until']);
  });

  await knex.schema.createTable('alert_firings', (t) => {
    t.text('id').primary();
    t.text('rule_id').notNullable().references('alert_rules.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.text('reason').notNullable();
    // What the messages say (title, count, release, first and last seen), as at the firing.
    t.jsonb('facts').notNullable();
    t.timestamp('time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['rule_id', 'time', 'id']);
    t.index(['time']);
  });

  await knex.schema.createTable('alert_firing_actions', (t) => {
    t.text('firing_id').notNullable().references('alert_firings.id').onDelete('CASCADE');
    t.smallint('action_index').notNullable();
    t.text('type').notNullable();
    t.text('state')
      .notNullable()
      .defaultTo('pending')
      .checkIn(['pending', 'sent', 'failed'], 'alert_firing_actions_state_check');
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.text('error');
    t.timestamp('update_time', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['firing_id', 'action_index']);
  });

  await knex.schema.createTable('alert_group_minutes', (t) => {
    t.text('group_id').notNullable().references('error_groups.id').onDelete('CASCADE');
    t.text('env_id').notNullable();
    t.timestamp('minute', { useTz: true }).notNullable();
    t.integer('count').notNullable();
    t.primary(['group_id', 'minute']);
    t.index(['minute']);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['alert_group_minutes', 'alert_firing_actions', 'alert_firings', 'alert_snoozes', 'alert_rules'])
    await knex.schema.dropTable(table);
}
