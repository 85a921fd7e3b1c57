// What makes an alert rule fire (docs/api.md "Alerts"). Kept apart from alerts.ts, without zod, so
// that the CLI names the kinds without bundling zod (as webhook-types.ts does for event types).
export const alertKinds = ['new_group', 'regression', 'frequency'] as const;

export type AlertWhen = (typeof alertKinds)[number];
