/** Environment of every unit test worker: no EMF lines on stdout (test/unit/observability.test.ts turns them on for itself). */
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
