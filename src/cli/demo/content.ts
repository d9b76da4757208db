/**
 * What the demo organization holds, as plain data: its people and, per team, its Rocks, Scorecard,
 * vision and accountability chart. src/cli/demo.ts and the writers beside this file write it, with
 * the instants counted back from "now".
 */
import type { GoalLevel, GoalStatus, OrganizationRole } from '../../db/database.js';
import type { VisionList, VisionObject } from '../../rules/vision.js';
import { SAMPLE_IDS } from './sampleIds.js';

export interface DemoPerson {
  /** The demo role the person stands for (one key each); null for the people who only fill teams. */
  role: string | null;
  email: string;
  name: string;
  timezone?: string;
  superadmin?: boolean;
  /** null: not a member of the organization. */
  orgRole: OrganizationRole | null;
  /** The id a docs sample names the person by (src/cli/demo/sampleIds.ts); else a random one. */
  id?: string;
}

// Output order of the roles = this order: organization roles, team roles in Sales, the platform operator.
export const PEOPLE = {
  owner: { role: 'ORG_OWNER', email: 'martina.kovacova@northwind.example', name: 'Martina Kováčová', orgRole: 'OWNER', id: SAMPLE_IDS.owner },
  admin: { role: 'ORG_ADMIN', email: 'peter.novak@northwind.example', name: 'Peter Novák', orgRole: 'ADMIN', id: SAMPLE_IDS.admin },
  implementer: {
    role: 'ORG_IMPLEMENTER',
    email: 'jana.horvathova@tractioncoach.example',
    name: 'Jana Horváthová',
    timezone: 'Europe/Vienna',
    orgRole: 'IMPLEMENTER',
  },
  salesOwner: { role: 'TEAM_OWNER', email: 'tomas.varga@northwind.example', name: 'Tomáš Varga', orgRole: 'MEMBER' },
  salesAdmin: { role: 'TEAM_ADMIN', email: 'lucia.bartosova@northwind.example', name: 'Lucia Bartošová', orgRole: 'MEMBER' },
  salesMember: { role: 'TEAM_MEMBER', email: 'marek.szabo@northwind.example', name: 'Marek Szabó', orgRole: 'MEMBER' },
  salesViewer: { role: 'TEAM_VIEWER', email: 'zuzana.tothova@northwind.example', name: 'Zuzana Tóthová', orgRole: 'MEMBER' },
  finance: { role: null, email: 'eva.minarikova@northwind.example', name: 'Eva Mináriková', orgRole: 'MEMBER', id: SAMPLE_IDS.member },
  warehouse: { role: null, email: 'juraj.hudak@northwind.example', name: 'Juraj Hudák', orgRole: 'MEMBER', id: SAMPLE_IDS.outsider },
  operator: { role: 'SUPERADMIN', email: 'operator@teamos.example', name: 'Platform Operator', superadmin: true, orgRole: null },
} satisfies Record<string, DemoPerson>;

export type Person = keyof typeof PEOPLE;

export interface RatingPlan {
  person: Person;
  /** null: absent (stored as rating 0). */
  rating: number | null;
}

export interface MilestonePlan {
  title: string;
  /** Days after the start of the goal's quarter. */
  dueAfterDays: number;
  /** Still open although due (the goal is behind). */
  late?: boolean;
  /** The id a docs sample names it by (src/cli/demo/sampleIds.ts); else a random one. */
  id?: string;
}

export interface GoalPlan {
  title: string;
  description: string;
  owner: Person;
  level: GoalLevel;
  status: GoalStatus;
  milestones: MilestonePlan[];
  /** The id a docs sample names it by (src/cli/demo/sampleIds.ts); else a random one. */
  id?: string;
}

export interface MetricPlan {
  title: string;
  goal: string;
  unit: string | null;
  owner: Person;
  description: string;
  /** Oldest week first; the last one is last week's (the current week is still running). */
  values: string[];
  /** The id a docs sample names it by (src/cli/demo/sampleIds.ts); else a random one. */
  id?: string;
}

export interface SeatPlan {
  title: string;
  person: Person | null;
  responsibilities: string;
  below?: SeatPlan[];
  /** The id a docs sample names it by (src/cli/demo/sampleIds.ts); else a random one. */
  id?: string;
}

export const LEADERSHIP_VALUES = ['Deliver what we promise', 'Own the problem', 'Keep it simple', 'Grow together'];

export const LEADERSHIP_ROCKS: GoalPlan[] = [
  {
    id: SAMPLE_IDS.goal,
    title: 'Win 5 new enterprise logistics accounts',
    description: 'Focus on retail and automotive shippers between Bratislava and Vienna.',
    owner: 'salesOwner',
    level: 'COMPANY',
    status: 'ON_TRACK',
    milestones: [
      { title: 'Shortlist 20 target accounts', dueAfterDays: 21 },
      { title: 'Hold 10 discovery meetings', dueAfterDays: 49 },
      { title: 'Sign 5 contracts', dueAfterDays: 84, id: SAMPLE_IDS.milestone },
    ],
  },
  {
    title: 'Open the Vienna cross-dock',
    description: 'A second hub so that Vienna deliveries no longer wait for the Bratislava night shift.',
    owner: 'admin',
    level: 'COMPANY',
    status: 'OFF_TRACK',
    milestones: [
      { title: 'Sign the lease for the Schwechat hall', dueAfterDays: 14, late: true },
      { title: 'Hire the site team', dueAfterDays: 42 },
      { title: 'First trucks through the dock', dueAfterDays: 84 },
    ],
  },
  {
    title: 'Raise on-time deliveries to 96 %',
    description: 'Measured on the Scorecard every week; the second warehouse shift is the lever.',
    owner: 'owner',
    level: 'COMPANY',
    status: 'ON_TRACK',
    milestones: [
      { title: 'Root causes of the last 50 late deliveries known', dueAfterDays: 18 },
      { title: 'Second shift fully staffed', dueAfterDays: 56 },
    ],
  },
  {
    title: 'Close the books within 5 working days',
    description: 'Monthly closing takes 11 working days today.',
    owner: 'finance',
    level: 'DEPARTMENT',
    status: 'ON_TRACK',
    milestones: [
      { title: 'Automate the fuel card import', dueAfterDays: 30 },
      { title: 'First close in 5 days', dueAfterDays: 70 },
    ],
  },
];

export const LEADERSHIP_LAST_QUARTER_ROCKS: GoalPlan[] = [
  {
    title: 'Roll out live delivery tracking to every customer',
    description: 'Customers see where their delivery is without calling dispatch.',
    owner: 'admin',
    level: 'COMPANY',
    status: 'DONE',
    milestones: [
      { title: 'Trackers in all 40 trucks', dueAfterDays: 30 },
      { title: 'Tracking page live for all customers', dueAfterDays: 75 },
    ],
  },
  {
    title: 'Renegotiate the fuel contracts',
    description: 'Two suppliers, prices fixed for a year.',
    owner: 'finance',
    level: 'COMPANY',
    status: 'OFF_TRACK',
    milestones: [
      { title: 'Offers from three suppliers', dueAfterDays: 35 },
      { title: 'Both contracts signed', dueAfterDays: 80, late: true },
    ],
  },
];

export const SALES_ROCKS: GoalPlan[] = [
  {
    title: 'Grow quoted revenue to EUR 1.6 million this quarter',
    description: 'About EUR 125,000 of quotes every week.',
    owner: 'salesAdmin',
    level: 'DEPARTMENT',
    status: 'ON_TRACK',
    milestones: [
      { title: 'New price list in every quote', dueAfterDays: 10 },
      { title: 'EUR 800,000 quoted', dueAfterDays: 45 },
      { title: 'EUR 1.6 million quoted', dueAfterDays: 88 },
    ],
  },
  {
    title: 'Launch the partner referral programme',
    description: 'Forwarders in Hungary and Austria refer shippers to us for a commission.',
    owner: 'salesMember',
    level: 'DEPARTMENT',
    status: 'OFF_TRACK',
    milestones: [
      { title: 'Commission model approved', dueAfterDays: 20, late: true },
      { title: 'Five partners signed', dueAfterDays: 70 },
    ],
  },
];

export const OPERATIONS_ROCKS: GoalPlan[] = [
  {
    title: 'Cut the average loading time to 25 minutes',
    description: 'Pre-staged pallets and a fixed dock plan for the morning wave.',
    owner: 'warehouse',
    level: 'DEPARTMENT',
    status: 'ON_TRACK',
    milestones: [
      { title: 'Dock plan for the morning wave', dueAfterDays: 21 },
      { title: 'Pallets pre-staged for every tour', dueAfterDays: 60 },
    ],
  },
];

export const LEADERSHIP_METRICS: MetricPlan[] = [
  {
    id: SAMPLE_IDS.metric,
    title: 'Revenue invoiced',
    goal: '>=250000',
    unit: 'EUR',
    owner: 'finance',
    description: 'Invoices sent this week, before VAT.',
    values: ['241300', '256900', '262400', '238750', '251000', '270150', '248900', '259300', '266800', '244100', '257450', '263900', '271200'],
  },
  {
    id: SAMPLE_IDS.secondMetric,
    title: 'On-time deliveries',
    goal: '>=96',
    unit: '%',
    owner: 'admin',
    description: 'Deliveries within the promised window, of all deliveries this week.',
    values: ['93.8', '94.5', '95.1', '92.7', '94.9', '96.2', '95.4', '96.8', '95.9', '94.2', '96.1', '96.5', '95.7'],
  },
  {
    title: 'Enterprise accounts in negotiation',
    goal: '>=2',
    unit: null,
    owner: 'salesOwner',
    description: 'Prospects with more than EUR 200,000 a year in the negotiation stage.',
    values: ['1', '2', '2', '3', '2', '1', '2', '3', '3', '2', '4', '3', '3'],
  },
  {
    title: 'Customer complaints',
    goal: '<=3',
    unit: null,
    owner: 'owner',
    description: 'Complaints logged by customer service this week.',
    values: ['4', '2', '3', '5', '2', '1', '3', '2', '4', '3', '2', '1', '2'],
  },
];

export const SALES_METRICS: MetricPlan[] = [
  {
    title: 'New qualified leads',
    goal: '>=25',
    unit: null,
    owner: 'salesMember',
    description: 'Leads accepted by sales this week.',
    values: ['24', '28', '21', '26', '30', '25', '23', '27', '29', '26', '22', '31', '26'],
  },
  {
    title: 'Quoted revenue',
    goal: '>=120000',
    unit: 'EUR',
    owner: 'salesAdmin',
    description: 'Value of quotes sent this week.',
    values: ['112000', '125400', '131800', '119900', '122300', '128750', '109600', '127000', '133400', '134500', '118000', '126250', '141000'],
  },
];

export const OPERATIONS_METRICS: MetricPlan[] = [
  {
    title: 'Average loading time',
    goal: '<=25',
    unit: 'min',
    owner: 'warehouse',
    description: 'From the truck at the dock to the doors closed, morning wave.',
    values: ['31', '30', '29', '29', '27', '28', '26', '25'],
  },
];

export const LEADERSHIP_VISION = {
  coreValues: LEADERSHIP_VALUES,
  coreFocus: {
    purpose: 'Keep Central European shelves and assembly lines supplied on time.',
    niche: 'Time-critical freight between Bratislava, Vienna and Budapest.',
  },
  tenYearTarget: 'EUR 100 million revenue with the most reliable freight network of the region.',
  marketingStrategy: {
    targetMarket: 'Retail and automotive shippers with daily deliveries across the three capitals.',
    uniques: ['Live delivery tracking for every customer', 'A cross-dock in every capital', 'One contact person per customer'],
    provenProcess: 'Quote within a day, onboard in a week, review every quarter.',
    guarantee: 'On time, or the next delivery is free.',
  },
  threeYearPicture: 'EUR 45 million revenue, three cross-docks, 180 people, 97 % of deliveries on time.',
  oneYearPlan: 'EUR 24 million revenue, the Vienna cross-dock running, 10 new enterprise accounts.',
  issuesList: ['Second warehouse shift staffing', 'Fuel costs', 'Dependence on two key accounts'],
} satisfies Record<string, VisionList | VisionObject | string>;

export const LEADERSHIP_SEATS: SeatPlan[] = [
  {
    title: 'Visionary',
    person: 'owner',
    responsibilities: 'Vision and culture\nKey customer and partner relationships\nNew services',
    below: [
      {
        title: 'Integrator',
        person: 'admin',
        responsibilities: 'Runs the leadership team\nQuarterly Rocks and the Scorecard\nResolves cross-team issues',
        below: [
          { title: 'Sales & Marketing', person: 'salesOwner', responsibilities: 'Pipeline and quotes\nPricing\nMarketing' },
          { title: 'Operations', person: 'admin', responsibilities: 'Warehouses and cross-docks\nFleet\nOn-time delivery' },
          { id: SAMPLE_IDS.seat, title: 'Finance', person: 'finance', responsibilities: 'Invoicing and collections\nMonthly close\nFuel and leasing contracts' },
        ],
      },
    ],
  },
];

export const SALES_SEATS: SeatPlan[] = [
  {
    title: 'Head of Sales',
    person: 'salesOwner',
    responsibilities: 'Sales plan and targets\nEnterprise negotiations',
    below: [
      { title: 'Key accounts', person: 'salesAdmin', responsibilities: 'Renewals\nQuarterly customer reviews' },
      { title: 'New business', person: 'salesMember', responsibilities: 'Lead qualification\nDiscovery meetings' },
      { title: 'Sales support', person: null, responsibilities: 'Quote preparation\nCRM upkeep' },
    ],
  },
];

export const OPERATIONS_SEATS: SeatPlan[] = [
  {
    title: 'Head of Operations',
    person: 'admin',
    responsibilities: 'Warehouses, fleet and dispatch',
    below: [{ title: 'Warehouse lead', person: 'warehouse', responsibilities: 'Shift plans\nLoading and unloading\nSafety' }],
  },
];
