/** Matrix rows of the task operations. */
import { createTask } from '../support/executionFactories.js';
import { csvFile } from '../support/testApp.js';
import { row, rowFor, type AreaRows, type World } from './world.js';

const S = 'scope';

const newTask = (w: World) => createTask(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const taskRows: AreaRows<'Tasks'> = {
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  listTeamTasks: row(                  [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks` })),
  createTask: row(                     [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      403,     403,       201,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks`, body: { title: 'Send the quote', ownerId: w.users.teamMember.id, dueDate: '2026-11-27' } })),
  getTask: rowFor(                     [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}` })),
  updateTask: rowFor(                  [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}`, body: { completed: true } })),
  deleteTask: rowFor(                  [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}` })),
  importTeamTasks: row(                [401, S,       200,     200,     200,        200,      200,      200,       403,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks/csv`, body: csvFile(`title,ownerEmail,dueDate\r\nSend the quote,${w.users.teamMember.email},2026-11-27\r\n`) })),
  exportTeamTasks: row(                [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks/csv` })),
};
