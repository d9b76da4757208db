/** Rows → the contract's vision record; the contract's field names → the columns that hold them. */
import type { Schemas } from '../api/operations.js';
import type { VisionRow } from '../db/database.js';
import type { VisionColumn } from '../db/queries/vision.js';
import { readVisionField, type VisionField, type VisionList, type VisionObject } from '../rules/vision.js';

export const visionColumns: Readonly<Record<VisionField, VisionColumn>> = {
  coreValues: 'core_values',
  coreFocus: 'core_focus',
  tenYearTarget: 'ten_year_target',
  marketingStrategy: 'marketing_strategy',
  threeYearPicture: 'three_year_picture',
  oneYearPlan: 'one_year_plan',
  quarterlyRocks: 'quarterly_rocks',
  issuesList: 'issues_list',
};

const list = (row: VisionRow, field: VisionField) => readVisionField(field, row[visionColumns[field]]) as VisionList | string | null;
const object = (row: VisionRow, field: VisionField) => readVisionField(field, row[visionColumns[field]]) as VisionObject | string | null;
const text = (row: VisionRow, field: VisionField) => readVisionField(field, row[visionColumns[field]]) as string | null;

export const toVision = (row: VisionRow): Schemas['Vision'] => ({
  id: row.id,
  revision: Number(row.revision),
  teamId: row.team_id,
  coreValues: list(row, 'coreValues'),
  coreFocus: object(row, 'coreFocus'),
  tenYearTarget: text(row, 'tenYearTarget'),
  marketingStrategy: object(row, 'marketingStrategy'),
  threeYearPicture: text(row, 'threeYearPicture'),
  oneYearPlan: text(row, 'oneYearPlan'),
  quarterlyRocks: list(row, 'quarterlyRocks'),
  issuesList: list(row, 'issuesList'),
  updatedAt: row.updated_at.toISOString(),
});
