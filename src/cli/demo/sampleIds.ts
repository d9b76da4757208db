/**
 * The ids of the contract's examples, which the docs page's samples name (scripts/codeSamples.ts
 * makes them from the examples), given to the demo records they stand for: so every sample, pasted
 * as it stands, acts on a record of `make run`'s demo with the Owner's demo key (the /platform ones
 * with the platform operator's). The demo's other records keep random ids.
 *
 * The samples work on the Leadership Team, the team the Owner owns and the one every area of the demo
 * fills. test/codeSamples.test.ts holds this table and the contract together: every id a sample names
 * is a record of the demo, and every sample runs verbatim on it.
 */
const exampleId = (prefix: string, n: number) => `${prefix}0000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export const SAMPLE_IDS = {
  /** Northwind Logistics. */
  organization: exampleId('0a0a', 1),
  /** Tatra Outfitters, the platform's other organization (the sample suspends it). */
  otherOrganization: exampleId('0a0a', 2),
  /** Martina Kováčová, the organization's Owner: the samples' key is hers. */
  owner: exampleId('0b0b', 1),
  /** Eva Mináriková, a Member of the Leadership Team (the samples change her roles, rate her, remove her). */
  member: exampleId('0b0b', 3),
  /** Peter Novák, an Admin of the Leadership Team (owner of a new metric, reviewed, given a seat). */
  admin: exampleId('0b0b', 4),
  /** Juraj Hudák, in the organization but not in the Leadership Team (the sample adds him). */
  outsider: exampleId('0b0b', 6),
  /** The Leadership Team. */
  team: exampleId('0c0c', 1),
  /** Its open to-do "Prepare the cash-flow forecast for the Vienna cross-dock", owned by the Member. */
  task: exampleId('0d0d', 1),
  /** Its open issue "Second warehouse shift is not fully staffed". */
  issue: exampleId('0e0e', 1),
  /** Its Rock "Win 5 new enterprise logistics accounts". */
  goal: exampleId('0f0f', 1),
  /** That Rock's last milestone, "Sign 5 contracts". */
  milestone: exampleId('1a1a', 3),
  /** Its measurable "Revenue invoiced". */
  metric: exampleId('1b1b', 1),
  /** Its measurable "On-time deliveries" (the Scorecard week's sample sets both). */
  secondMetric: exampleId('1b1b', 2),
  /** Its last meeting, COMPLETED. */
  meeting: exampleId('1c1c', 1),
  /** Its meeting running now, IN_PROGRESS (its ratings are hidden until revealed). */
  runningMeeting: exampleId('1c1c', 2),
  /** Its next meeting, SCHEDULED (the sample starts it). */
  nextMeeting: exampleId('1c1c', 3),
  /** The cascading message of its last meeting. */
  message: exampleId('1d1d', 1),
  /** Its accountability chart's seat "Finance". */
  seat: exampleId('1e1e', 1),
  /** Its document "Board report template". */
  document: exampleId('1f1f', 2),
  /** A key of the Owner's own that no one holds ("Old laptop"), for the platform operator to revoke. */
  apiKey: exampleId('2a2a', 3),
  /** The organization's webhook (paused). */
  webhook: exampleId('4a4a', 1),
  /** Its failed delivery of the event below. */
  delivery: exampleId('4b4b', 3),
  /** The log's `task.created` of the to-do above. */
  event: exampleId('4c4c', 1),
  /** The organization's export, COMPLETED an hour before now, with its archive. */
  export: exampleId('5e5e', 1),
} as const;
