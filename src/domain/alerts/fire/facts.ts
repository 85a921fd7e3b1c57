// What a firing's messages say, fixed at the firing (alert_firings.facts): read from the stored
// group, which holds only what the scrubber left of its events, so no message can carry what the
// scrubber removed.

export interface FiringFacts {
  title: string;
  culprit: string;
  environment: string;
  /** The group's events so far; for a frequency rule, the window's. */
  count: number;
  /** Frequency rules: the window the count is over, in minutes. */
  window_minutes: number | null;
  /** The release of the group's latest event ('' when none was given). */
  release: string;
  first_seen: string;
  last_seen: string;
  /** The group in the console. */
  link: string;
}

/** The console's page of a group, under the service's public URL (CAIRN_BASE_URL). */
export const consoleLink = (baseUrl: string, groupId: string): string =>
  `${baseUrl.replace(/\/$/, '')}/console/errors/${encodeURIComponent(groupId)}`;
