/**
 * Applications and portal access (docs/portal.md): `POST/GET /applications`,
 * `GET/PATCH/DELETE /applications/{uid}`, `POST/DELETE /applications/{uid}/portal-access`, and
 * the portal's own `POST/GET /portal/session`. Thin: parsing, then ../applications/.
 */
import { httpHandler } from './http';
import { reply } from '../core/middleware/api-request';
import { parse, parsePaging } from '../core/rules/validation';
import { createApplicationSchema, patchApplicationSchema } from '../applications/rules';
import { portalAccessSchema } from '../core/rules/portal';
import { createApplicationOp, deleteApplicationOp, getApplicationOp, listApplicationsOp, patchApplicationOp } from '../applications/operations';
import { createPortalAccess, describePortalSession, exchangePortalLink, revokePortalAccess } from '../applications/portal';

/** @public The Lambda runtime calls it by name (lib/ sets `handler`); the local gateway and bin/invoke.ts import it by a template path. */
export const handler = httpHandler('applications', {
  createApplication: async (req) => reply(await createApplicationOp(req.namespace, parse(createApplicationSchema, req.body), Date.now()), { status: 201 }),

  listApplications: async (req) => {
    const { limit, offset } = parsePaging(req.query);
    return reply(await listApplicationsOp(req.namespace, limit, offset));
  },

  getApplication: async (req) => reply(await getApplicationOp(req.namespace, req.params.uid)),

  patchApplication: async (req) => reply(await patchApplicationOp(req.namespace, req.params.uid, parse(patchApplicationSchema, req.body), Date.now())),

  deleteApplication: async (req) => reply(await deleteApplicationOp(req.namespace, req.params.uid, Date.now())),

  createPortalAccess: async (req) => {
    const { session_days } = parse(portalAccessSchema, req.body);
    const access = await createPortalAccess({
      ns: req.namespace, uid: req.params.uid, keyId: req.keyId, sessionDays: session_days, protocol: req.protocol, host: req.host ?? 'localhost',
      portalOriginHeader: req.headers['x-portal-origin'], now: Date.now(),
    });
    return reply(access, { status: 201 });
  },

  revokePortalAccess: async (req) => reply(await revokePortalAccess(req.namespace, req.params.uid, Date.now())),

  createPortalSession: async (req) => reply(await exchangePortalLink(req.namespace, req.headers.authorization, Date.now()), { status: 201 }),

  getPortalSession: async (req) => reply(await describePortalSession(req.namespace, req.headers.authorization)),
});
