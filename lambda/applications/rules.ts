/**
 * Applications: a platform's customers inside a namespace, each named by the `uid` the
 * platform chooses (its own customer id). Pure rules: the request schemas, the view, the cap.
 * Webhooks may belong to one (`application`), and a portal session is scoped to one
 * (./portal.ts). No AWS imports.
 */
import * as z from 'zod/mini';
import { ApiError, notFound } from '../core/rules/errors';
import { resourceName } from '../core/rules/validation';
import { isoTime } from '../core/rules/envelope';

/** Metadata is for the platform's own labels, kept small: every list reads whole items. */
export const METADATA_LIMITS = { keys: 16, keyChars: 64, valueChars: 256, jsonBytes: 2048 } as const;

const nameField = () => z.string().check(z.minLength(1), z.maxLength(256));

const metadataField = () =>
  z.record(z.string(), z.string()).check(
    z.superRefine((m, ctx) => {
      const entries = Object.entries(m);
      if (entries.length > METADATA_LIMITS.keys) ctx.addIssue({ code: 'custom', message: `has at most ${METADATA_LIMITS.keys} keys` });
      for (const [k, v] of entries) {
        if (k.length === 0 || k.length > METADATA_LIMITS.keyChars) ctx.addIssue({ code: 'custom', message: `keys are 1 to ${METADATA_LIMITS.keyChars} characters` });
        if (v.length > METADATA_LIMITS.valueChars) ctx.addIssue({ code: 'custom', path: [k], message: `values are at most ${METADATA_LIMITS.valueChars} characters` });
      }
      if (Buffer.byteLength(JSON.stringify(m), 'utf8') > METADATA_LIMITS.jsonBytes) ctx.addIssue({ code: 'custom', message: `is at most ${METADATA_LIMITS.jsonBytes} bytes as JSON` });
    }),
  );

/** `POST /applications`: `uid` with the character rules of resource names (DESIGN.md section 4). */
export const createApplicationSchema = z.object({
  uid: resourceName(),
  name: z.optional(nameField()),
  metadata: z.optional(metadataField()),
});

/** `PATCH /applications/{uid}`: the given fields replace the stored ones; `null` clears one. */
export const patchApplicationSchema = z.object({
  name: z.optional(z.nullable(nameField())),
  metadata: z.optional(z.nullable(metadataField())),
});

export interface Application {
  namespace: string;
  uid: string;
  name?: string;
  metadata?: Record<string, string>;
  created_at: number;
  updated_at: number;
  /** Counts the writes (1 at create); a PATCH writes only over the version it read. */
  version: number;
  /**
   * Bumped by `DELETE /applications/{uid}/portal-access`: links and sessions carry the
   * generation they were issued under and stop working when it moves on (./portal.ts).
   */
  portal_generation: number;
  /**
   * Random at create: links and sessions carry it too, so none issued to an earlier application
   * of the same uid (deleted, then created again) is ever accepted; generations alone start at 0
   * again. Absent only on applications created before it existed (their grants have none either).
   */
  incarnation?: string;
  /** Set while a delete removes the application's webhooks: it no longer takes new ones. */
  deleting_at?: number;
}

/** The application as the API shows it. */
export const applicationView = (a: Application) => ({
  uid: a.uid,
  name: a.name ?? null,
  metadata: a.metadata ?? {},
  created_at: isoTime(a.created_at),
  updated_at: isoTime(a.updated_at),
});

export const applicationNotFound = (uid: string) => notFound('APPLICATION_NOT_FOUND', `Application ${uid}`);

/** 422 on a webhook's `application` that names no application of the namespace. */
export const unknownApplication = (uid: string) =>
  new ApiError(422, 'VALIDATION_ERROR', `Invalid value for application: no application ${uid} exists in this namespace; create it first (POST /applications).`, {
    fields: [{ field: 'application', message: `no application ${uid} exists in this namespace` }],
  });
