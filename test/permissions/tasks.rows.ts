/** Matrix rows of the task operations. */
import { createTask } from '../support/executionFactories.js';
import { row, rowFor, type World } from './world.js';

const S = 'scope';

const newTask = (w: World) => createTask(w.db, w.team.id, w.users.teamMember.id);

// prettier-ignore
export const taskRows = [
  //                                  noKey readOnly orgOwner orgAdmin implementer teamOwner teamAdmin teamMember teamViewer orgMember outsider superadmin superadminMember formerSuperadmin
  row('listTeamTasks',                 [401, 200,     200,     200,     200,        200,      200,      200,       200,       403,      403,     403,       200,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks` })),
  row('createTask',                    [401, S,       201,     201,     201,        201,      201,      201,       403,       403,      403,     403,       201,             S],
    (w) => ({ path: `/v1/teams/${w.team.id}/tasks`, body: { title: 'Send the quote', ownerId: w.users.teamMember.id, dueDate: '2026-11-27' } })),
  rowFor('getTask',                    [401, 200,     200,     200,     200,        200,      200,      200,       200,       404,      404,     404,       200,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}` })),
  rowFor('updateTask',                 [401, S,       200,     200,     200,        200,      200,      200,       403,       404,      404,     404,       200,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}`, body: { completed: true } })),
  rowFor('deleteTask',                 [401, S,       204,     204,     204,        204,      204,      403,       403,       404,      404,     404,       403,             S],
    newTask,
    (_w, task) => ({ path: `/v1/tasks/${task.id}` })),
];
