/**
 * Schedules (extension, docs/schedules.md): `POST/GET /schedules`,
 * `GET/PUT/PATCH/DELETE /schedules/{schedule_name}`. Scope `manage` to write, rate category
 * management.
 */
import { httpHandler } from './http';
import { reply, type ApiRequest } from '../core/middleware/api-request';
import { hasScope } from '../core/rules/auth';
import { validationError } from '../core/rules/errors';
import { parse } from '../core/rules/validation';
import { createScheduleSchema, patchScheduleSchema, replaceScheduleSchema } from '../schedules/rules/schedules';
import { createScheduleOp, deleteScheduleOp, getScheduleOp, listSchedulesOp, patched, toScheduleConfig, updateScheduleOp } from '../schedules/operations';

/** Only keys that may change a schedule see what it publishes (DESIGN.md section 2). */
const readerOf = (req: ApiRequest) => ({ manage: hasScope(req.scopes, 'manage') });

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('schedules', {
  createSchedule: async (req) => {
    const input = parse(createScheduleSchema, req.body);
    return reply(await createScheduleOp(req.namespace, input.name, toScheduleConfig(input), Date.now()), { status: 201 });
  },

  listSchedules: async (req) => reply(await listSchedulesOp(req.namespace, req.query, readerOf(req))),

  getSchedule: async (req) => reply(await getScheduleOp(req.namespace, req.params.schedule_name, readerOf(req))),

  replaceSchedule: async (req) => {
    const name = req.params.schedule_name;
    const input = parse(replaceScheduleSchema, req.body);
    if (input.name !== undefined && input.name !== name) throw validationError([{ field: 'name', message: `must be the name in the path (${name}) or left out; a schedule cannot be renamed` }]);
    const config = toScheduleConfig(input);
    return reply(await updateScheduleOp(req.namespace, name, () => config, Date.now()));
  },

  patchSchedule: async (req) => {
    const name = req.params.schedule_name;
    const patch = parse(patchScheduleSchema, req.body);
    return reply(await updateScheduleOp(req.namespace, name, (stored) => toScheduleConfig(patched(stored.config, patch)), Date.now()));
  },

  deleteSchedule: async (req) => reply(await deleteScheduleOp(req.namespace, req.params.schedule_name, Date.now())),
});
