/**
 * Compile-time checks of src/api/operations.ts, run by `tsc --noEmit`: each `@ts-expect-error`
 * line must fail to type-check, so a loosened type breaks the build.
 */
import type { OperationRequest, SuccessResponse } from '../src/api/operations.js';

export const created: SuccessResponse<'createTask'> = {
  status: 201,
  body: {
    id: '0d0d0000-0000-4000-8000-000000000001',
    teamId: '0c0c0000-0000-4000-8000-000000000001',
    title: 'Send the revised freight quote to Baltic Trade',
    ownerId: '0b0b0000-0000-4000-8000-000000000003',
    dueDate: '2026-11-27',
    completed: false,
    completedAt: null,
    meetingId: null,
    createdAt: '2026-11-16T09:42:10.512Z',
  },
};

export const deleted: SuccessResponse<'deleteTask'> = { status: 204, body: undefined };

// @ts-expect-error createTask answers 201, not 200
export const wrongStatus: SuccessResponse<'createTask'> = { status: 200, body: created.body };

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
