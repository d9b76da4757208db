/** A CSV import's file read and its rows judged, before anything is looked up or written. */
import { describe, expect, it } from 'vitest';
import { PayloadTooLarge } from '../../src/errors.js';
import { CSV_MAX_ROWS, readCsv, type CsvSheet } from '../../src/rules/csvFile.js';
import { issueCsvImport, judgeIssueRows, judgeScorecardRows, judgeTaskRows, scorecardCsvImport, taskCsvImport } from '../../src/rules/csvImport.js';

const sheet = (text: string, columns = taskCsvImport): CsvSheet => {
  const read = readCsv(text, columns);
  if ('issues' in read) throw new Error(JSON.stringify(read.issues));
  return read;
};

const people = new Map([['ana@example.com', 'u-ana']]);

describe('reading a CSV file', () => {
  it('undoes the neutralisation of formulas, trims cells and numbers rows as a spreadsheet does', () => {
    const read = sheet("\ufefftitle,ownerEmail,dueDate\r\n'=SUM(A1) , Ana@Example.com ,2026-11-27\r\n");

    expect(read.records).toEqual([{ row: 2, cells: { title: '=SUM(A1)', ownerEmail: 'Ana@Example.com', dueDate: '2026-11-27' } }]);
  });

  it('names every structural problem of the header at once: a formula, a column twice, an unknown one, a missing one', () => {
    const read = readCsv('=x,title,title,colour\r\na,b,c,d\r\n', taskCsvImport);

    expect('issues' in read && read.issues.map((issue) => [issue.code, ...issue.path])).toEqual([
      ['formula', 'rows', '1', '=x'],
      ['unrecognized_keys', 'rows', '1', '=x'],
      ['duplicate', 'rows', '1', 'title'],
      ['unrecognized_keys', 'rows', '1', 'colour'],
      ['invalid_type', 'rows', '1', 'ownerEmail'],
      ['invalid_type', 'rows', '1', 'dueDate'],
    ]);
  });

  it(`refuses more than ${CSV_MAX_ROWS.toLocaleString('en')} rows as too large, and takes exactly that many`, () => {
    expect(() => readCsv(`title\r\n${'a\r\n'.repeat(CSV_MAX_ROWS + 1)}`, issueCsvImport)).toThrow(PayloadTooLarge);
    expect(sheet(`title\r\n${'a\r\n'.repeat(CSV_MAX_ROWS)}`, issueCsvImport).records).toHaveLength(CSV_MAX_ROWS);
  });
});

describe('judging the rows', () => {
  it('finds owners by e-mail in any case and keeps the instants given', () => {
    const judged = judgeTaskRows(sheet('title,ownerEmail,dueDate,completed,completedAt\r\nA,ANA@example.com,2026-11-27,TRUE,2026-11-18T15:03:44.001Z\r\n'), people);

    expect(judged).toEqual({ tasks: [{ title: 'A', ownerId: 'u-ana', dueDate: '2026-11-27', completed: true, completedAt: new Date('2026-11-18T15:03:44.001Z'), createdAt: null }] });
  });

  it('refuses a completion time on an open task and a resolution time on an unsolved issue', () => {
    const tasks = judgeTaskRows(sheet('title,ownerEmail,dueDate,completedAt\r\nA,ana@example.com,2026-11-27,2026-11-18T15:03:44.001Z\r\n'), people);
    const issues = judgeIssueRows(sheet('title,status,resolvedAt\r\nA,OPEN,2026-11-18T15:03:44.001Z\r\n', issueCsvImport), people, 'u-caller');

    expect('issues' in tasks && tasks.issues.map((issue) => issue.path)).toEqual([['rows', '2', 'completedAt']]);
    expect('problems' in issues && issues.problems.map((issue) => issue.path)).toEqual([['rows', '2', 'resolvedAt']]);
  });

  it('gives an issue without createdByEmail to the caller, and the defaults of a create', () => {
    expect(judgeIssueRows(sheet('title\r\nA\r\n', issueCsvImport), people, 'u-caller')).toEqual({
      issues: [{ title: 'A', description: null, priority: 'MEDIUM', status: 'OPEN', createdById: 'u-caller', resolvedAt: null, createdAt: null }],
    });
  });

  it('calls identical rows without ids duplicates, naming the first', () => {
    const judged = judgeIssueRows(sheet('title\r\nA\r\nB\r\nA\r\n', issueCsvImport), people, 'u-caller');

    expect('problems' in judged && judged.problems.map((issue) => issue.message)).toEqual(['Row 4: repeats row 2; each row at most once.']);
  });

  it("judges Scorecard cells with the week's rules, skips empty ones, and refuses a title two metrics share", () => {
    const metrics = [
      { id: 'm1', title: 'Leads', goal: '>=25' },
      { id: 'm2', title: 'Mood', goal: 'Good' },
    ];
    const twins = [...metrics, { id: 'm3', title: 'Leads', goal: '>=1' }];

    expect(judgeScorecardRows(sheet('week,Leads,Mood\r\n2026-11-16,27,\r\n', scorecardCsvImport(metrics)), metrics)).toEqual({
      values: [{ metricId: 'm1', week: '2026-11-16', value: '27', onTrack: true }],
    });
    const judged = judgeScorecardRows(sheet('week,Leads\r\n2026-11-16,27\r\n', scorecardCsvImport(twins)), twins);
    expect('issues' in judged && judged.issues.map((issue) => issue.path)).toEqual([['rows', '1', 'Leads']]);
  });
});
