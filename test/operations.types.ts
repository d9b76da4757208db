/**
 * Compile-time checks of src/api/operations.ts, run by `tsc --noEmit`: each `@ts-expect-error`
 * line must fail to type-check, so a loosened type breaks the build.
 */
import type { OperationRequest, SuccessResponse } from '../src/api/operations.js';
import { locationOf } from '../src/api/location.js';
import type { Handler } from '../src/handlers/types.js';

export const created: SuccessResponse<'createTask'> = {
  status: 201,
  body: {
    id: '0d0d0000-0000-4000-8000-000000000001',
    revision: 48213,
    teamId: '0c0c0000-0000-4000-8000-000000000001',
    title: 'Send the revised freight quote to Baltic Trade',
    ownerId: '0b0b0000-0000-4000-8000-000000000003',
    dueDate: '2026-11-27',
    completed: false,
    completedAt: null,
    meetingId: null,
    createdAt: '2026-11-16T09:42:10.512Z',
  },
  headers: { Location: locationOf('/tasks/{id}', { id: '0d0d0000-0000-4000-8000-000000000001' }) },
};

export const deleted: SuccessResponse<'deleteTask'> = { status: 204, body: undefined };

// @ts-expect-error createTask answers 201, not 200
export const wrongStatus: SuccessResponse<'createTask'> = { status: 200, body: created.body, headers: created.headers };

// @ts-expect-error a create answers the Location its contract declares
export const withoutLocation: SuccessResponse<'createTask'> = { status: 201, body: created.body };

// @ts-expect-error a handler that forgets the Location of its create does not compile
export const forgetsLocation: Handler<'createTask'> = async () => ({ status: 201 as const, body: created.body });

// @ts-expect-error a header the contract does not declare for the response
export const undeclaredHeader: SuccessResponse<'getTask'> = { status: 200, body: created.body, headers: { Location: '/v1/tasks/x' } };

// @ts-expect-error ETag is the pipeline's to write, never a handler's
export const pipelineHeader: SuccessResponse<'createTask'> = { status: 201, body: created.body, headers: { ...created.headers, ETag: '"x"' } };

// @ts-expect-error a milestone has no read of its own, so its create answers no Location
export const milestoneLocation: SuccessResponse<'createMilestone'> = { status: 201, body: undefined as never, headers: { Location: '/v1/goals/x' } };

// @ts-expect-error a Location names a path of the contract that answers GET
export const noSuchRead = locationOf('/goals/{id}/milestones', { id: 'x' });

// @ts-expect-error a Location names the parameters of its path
export const wrongParameter = locationOf('/tasks/{id}', { taskId: 'x' });

// @ts-expect-error a task has no `name`
export const wrongBody: SuccessResponse<'getTask'> = { status: 200, body: { ...created.body, name: 'x' } };

export function readRequest(request: OperationRequest<'updateTask'>): string | undefined {
  // @ts-expect-error updateTask has no query parameters
  void request.query.completed;
  return request.params.id + (request.body.title ?? '');
}

export function readList(request: OperationRequest<'listTeamTasks'>): boolean | undefined {
  return request.query.completed;
}
