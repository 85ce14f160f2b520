/**
 * Types of the messaging service API, generated from its OpenAPI document by openapi-typescript.
 * Do not edit: run `npm run client` after changing a route or a schema.
 */

export interface paths {
    "/namespace": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get the namespace of the API key
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getNamespace"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/namespace/access": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The key's scopes and the namespace's rate-limit headroom (extension)
         * @description What the calling key may do and, per rate-limit category, the limit and what is left of the current minute, read without counting a request of those categories (this request counts under management).
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getNamespaceAccess"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/topics/{topic}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a message to a topic
         * @description Stores the message in every queue, stream and subscription whose filter matches the topic and queues it for every matching webhook before answering 201 (read-your-writes). A topic nothing matches answers 404 TOPIC_NOT_FOUND and stores nothing. When the event type that applies to the topic enforces its schema, a payload that is not JSON or fails it is 422 VALIDATION_ERROR with `details.violations` (`instance_path`, `keyword`), and nothing is stored.
         *
         *     Scope: `publish`. Rate category: `publish` (1000 requests per minute per namespace by default).
         */
        post: operations["publish"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/topics/{topic}/messages/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish 1 to 100 messages to a topic, all or nothing
         * @description Every item is validated before anything is stored. The body may be at most 1 MiB, each payload at most 256 KiB. An enforced event-type schema refuses the whole batch (422) when any payload fails it; `details.violations[].index` names each such message.
         *
         *     Scope: `publish`. Rate category: `publish` (1000 requests per minute per namespace by default).
         */
        post: operations["publishBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/messages/{message_id}/delivery": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Cancel a message held for a delay beyond 900 s (extension)
         * @description A message published with `delay_seconds` above 900 or a `deliver_at` more than 15 minutes ahead is held by the service until 14 minutes before its time. Until then it can be cancelled: its queues never see it and their `message_count` drops. A repeated cancel answers the same. 409 ALREADY_DELIVERED once it was handed over; 404 MESSAGE_NOT_FOUND for a message that was never held (shorter delays live in SQS and cannot be cancelled).
         *
         *     Scope: `publish`. Rate category: `publish` (1000 requests per minute per namespace by default).
         */
        delete: operations["cancelDelivery"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List queues by name
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listQueues"];
        put?: never;
        /**
         * Create a queue
         * @description Scope: `manage`; also `publish` when the queue has a dead_letter_topic: dead-lettering publishes to it on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a queue with its settings and counters
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getQueue"];
        put?: never;
        post?: never;
        /**
         * Delete a queue and all its messages
         * @description The name is reusable at once; the messages are purged in the background and a recreated queue never sees them.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteQueue"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}/messages/consume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Receive messages from a queue (long polling)
         * @description Claims up to max_messages visible messages, oldest first, and hides them for visibility_timeout_seconds. Waits up to timeout_seconds for a first message (the AWS deployment caps the wait below API Gateway's 29 s integration timeout). A message is delivered at most 1 + max_retries times, then dead-lettered or dropped.
         *
         *     Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["consumeQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}/messages/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Acknowledge up to 100 messages (extension)
         * @description Each entry is judged like a single ack; the answer is 200 with one result per entry in request order.
         *
         *     Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["ackQueueMessages"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * SQS's counts of a queue: visible, in flight, delayed; and its oldest message's age (extension)
         * @description The counts are approximate, as SQS reports them; they settle within about a minute of a change. `oldest_message_age_seconds` comes from the queue's expiry buckets (one Query, whatever the depth), accurate to one bucket width (`oldest_message_age_precision_seconds`, a tenth of the TTL, 1-60 s), and drops to null once every message is acknowledged or expired.
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getQueueStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}/redrive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Move messages of a queue (a dead-letter queue) to a topic (extension)
         * @description Receives up to `max` (default and at most 100) messages, publishes them to `to_topic` without their `dlq_*` properties, then removes them: at least once. Call again while `remaining` is above 0. 404 TOPIC_NOT_FOUND when nothing is bound to the topic; 422 when the queue itself matches it. Its publishes spend the namespace's fan-out budget of writes: over it the redrive stops with 429 RATE_LIMIT_EXCEEDED (`details.category` `fanout`, with `moved`, `published_not_removed` and `expired`: how far it got), and the messages it received and did not publish are visible again at once.
         *
         *     Scope: `manage` and `publish` (it publishes later on the key's behalf). Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["redriveQueue"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/queues/{queue_name}/messages/{message_id}/ack": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Acknowledge (delete) a received message
         * @description Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["ackQueueMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/streams": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List streams by name
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listStreams"];
        put?: never;
        /**
         * Create a stream
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createStream"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/streams/{stream_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a stream with its settings, counters and offsets
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getStream"];
        put?: never;
        post?: never;
        /**
         * Delete a stream and all its messages
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteStream"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/streams/{stream_name}/messages/consume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Read messages from a stream by offset (long polling)
         * @description Returns messages with offset >= the start: start_offset (`earliest`, `latest` or an offset), else the group's committed offset, else `earliest`. Does not commit. `partition` limits the read to one partition.
         *
         *     Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["consumeStream"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/streams/{stream_name}/offsets/commit": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Commit a consumer group's position
         * @description The offset is the next one to read; above latest_offset is 422.
         *
         *     Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["commitStreamOffset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/streams/{stream_name}/groups": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Partitions with their next offsets, consumer groups with committed offsets and lag (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listStreamGroups"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List subscriptions by name
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listSubscriptions"];
        put?: never;
        /**
         * Create a subscription
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/{subscription_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a subscription with its settings and counters
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getSubscription"];
        put?: never;
        post?: never;
        /**
         * Delete a subscription
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteSubscription"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/{subscription_name}/messages/consume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Receive the messages after a subscriber's cursor (long polling)
         * @description Every subscriber id has its own cursor and receives every retained message once; the cursor advances atomically with the read.
         *
         *     Scope: `consume`. Rate category: `consume` (500 requests per minute per namespace by default).
         */
        post: operations["consumeSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/subscriptions/{subscription_name}/subscribers": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Subscribers with their cursors and lag (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listSubscriptionSubscribers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhooks by name (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Create a webhook (extension)
         * @description The answer is the only one that carries the signing secret. Targets that resolve to private, loopback or link-local addresses are refused with 422 on `url` unless the operator allows them.
         *
         *     Scope: `manage`; also `consume` when the webhook is left enabled: it sends every payload its filter matches to its URL; also `publish` when the webhook is left with a hook (on_success, on_failure): hooks publish on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send one synthetic delivery to a URL
         * @description Signed with a throwaway secret, no retries; the answer never echoes the target's body.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["testWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a webhook configuration (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getWebhook"];
        /**
         * Replace a webhook configuration (extension)
         * @description Fields left out return to their defaults. The stored secret stays unless the body gives a new one; `name`, when given, must match the path.
         *
         *     Scope: `manage`; also `consume` when the webhook is left enabled: it sends every payload its filter matches to its URL; also `publish` when the webhook is left with a hook (on_success, on_failure): hooks publish on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        put: operations["replaceWebhook"];
        post?: never;
        /**
         * Delete a webhook (extension)
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        /**
         * Change some fields of a webhook configuration (extension)
         * @description Scope: `manage`; also `consume` when the webhook is left enabled: it sends every payload its filter matches to its URL; also `publish` when the webhook is left with a hook (on_success, on_failure): hooks publish on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        patch: operations["patchWebhook"];
        trace?: never;
    };
    "/webhooks/{webhook_name}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get delivery counters of a webhook
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getWebhookStatus"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_name}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List delivery attempts, newest first (extension)
         * @description One entry per attempt of the last 7 days, bodies never stored: message id, attempt number, time, duration, HTTP status, the one-line reason of a failure and whether it was the last attempt. Pages by `cursor` (the `next_cursor` of the previous page). An entry shows a moment after its attempt.
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_name}/deliveries/{message_id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deliver a message again (extension)
         * @description Queues a new delivery of a message whose delivery to this webhook failed in the last 7 days: same body and `webhook-id`, signed afresh, with the SSRF guard, retry policy, hooks and status counters of any delivery. 404 MESSAGE_NOT_FOUND when no failed delivery of it is retained.
         *
         *     Scope: `manage` and `consume` (it sends stored payloads to a URL the caller chooses: the webhook's, or those of the webhooks a portal session creates); also `publish` when the webhook has a hook (on_success, on_failure): the replayed delivery runs it, publishing on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["replayWebhookDelivery"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_name}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deliver again every delivery that failed since a time (extension)
         * @description Queues a new delivery of each message whose delivery to this webhook ended in failure at or after `since` (within the last 7 days) and has not been delivered by a replay since, oldest first, at most 500 per call; `next_since` says where to continue when more are left.
         *
         *     Scope: `manage` and `consume` (it sends stored payloads to a URL the caller chooses: the webhook's, or those of the webhooks a portal session creates); also `publish` when the webhook has a hook (on_success, on_failure): the replayed delivery runs it, publishing on the key's behalf. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["replayWebhookFailures"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhook_name}/secret/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate the signing secret (extension)
         * @description Answers a new secret, once. For `grace_seconds` (default 86400, at most 604800) every delivery carries a signature with the new and one with the old secret in `webhook-signature`, so a receiver switches without a failed delivery.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["rotateWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List schedules by name (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listSchedules"];
        put?: never;
        /**
         * Create a schedule (extension)
         * @description Publishes `payload` (with `{{.scheduled_time}}` and `{{.schedule}}` filled in) to `topic` at every time of a 5-field `cron` in `timezone` (IANA, default UTC), or `every` N seconds (at least 60), between `start_at` and `end_at`. At most 1,000 schedules per namespace by default (409 SCHEDULE_LIMIT_EXCEEDED).
         *
         *     Scope: `manage` and `publish` (it publishes later on the key's behalf). Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createSchedule"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/schedules/{schedule_name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a schedule with its next and last run (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getSchedule"];
        /**
         * Replace a schedule (extension)
         * @description Fields left out return to their defaults; the next run is computed again from now, except a run already due and not made yet, which is kept. `name`, when given, must match the path.
         *
         *     Scope: `manage` and `publish` (it publishes later on the key's behalf). Rate category: `management` (100 requests per minute per namespace by default).
         */
        put: operations["replaceSchedule"];
        post?: never;
        /**
         * Delete a schedule (extension)
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteSchedule"];
        options?: never;
        head?: never;
        /**
         * Change some fields of a schedule (extension)
         * @description Given fields replace the stored ones; `cron` replaces `every` and the other way round; null clears `start_at` or `end_at`. The result is validated like a create.
         *
         *     Scope: `manage` and `publish` (it publishes later on the key's behalf). Rate category: `management` (100 requests per minute per namespace by default).
         */
        patch: operations["patchSchedule"];
        trace?: never;
    };
    "/event-types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List event types by name (extension)
         * @description A page is cut to what one response carries (about 5 MiB); `limit` then echoes the number of event types it holds, so `offset + limit` is the next page.
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listEventTypes"];
        put?: never;
        /**
         * Create an event type (extension)
         * @description A topic or topic filter with a `description`, an optional JSON Schema (draft 2020-12; 422 on `schema` when invalid) and up to 10 `examples` (a string is a payload as published, any other value the parsed payload; each must satisfy the schema). With `enforce: true` a publish whose topic this event type applies to (the most specific match) is refused with 422 unless its payload is JSON satisfying the schema. At most 500 event types per namespace by default (409 LIMIT_EXCEEDED).
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createEventType"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/event-types/{event_type}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an event type (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getEventType"];
        put?: never;
        post?: never;
        /**
         * Delete an event type (extension)
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteEventType"];
        options?: never;
        head?: never;
        /**
         * Change some fields of an event type (extension)
         * @description Given fields replace the stored ones; null clears `description`, `schema` or `examples`. The result is validated like a create, and the next publish is judged by it.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        patch: operations["patchEventType"];
        trace?: never;
    };
    "/asyncapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The event catalog as an AsyncAPI 3.0 document (extension)
         * @description Generated from the event types: one channel per event type (`address` its name), its message with the schema as payload and the examples; `info.version` is the catalog version. The document is the envelope's `data`. When the whole document would not fit in one response (about 5 MiB), the examples are left out and `info` has `x-examples-omitted: true` (each event type has them in GET /event-types/{name}).
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getAsyncApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/applications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List applications by uid (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["listApplications"];
        put?: never;
        /**
         * Create an application: one of the platform's customers (extension)
         * @description `uid` is the platform's own customer id (the character rules of resource names). At most 1000 applications per namespace by default (409 LIMIT_EXCEEDED).
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createApplication"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/applications/{uid}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get an application (extension)
         * @description Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getApplication"];
        put?: never;
        post?: never;
        /**
         * Delete an application and its webhooks (extension)
         * @description Its portal links and sessions stop working at once; its webhooks are deleted with it.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["deleteApplication"];
        options?: never;
        head?: never;
        /**
         * Change the name or metadata of an application (extension)
         * @description Given fields replace the stored ones; null clears one.
         *
         *     Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        patch: operations["patchApplication"];
        trace?: never;
    };
    "/applications/{uid}/portal-access": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create a single-use portal link for an application (extension)
         * @description The link works once within 10 minutes; its use opens a session of `session_days` (default 7, 1 to 30) that may manage only this application's webhooks and read the event catalog.
         *
         *     Scope: `manage` and `consume` (it sends stored payloads to a URL the caller chooses: the webhook's, or those of the webhooks a portal session creates). Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createPortalAccess"];
        /**
         * End every portal link and session of an application (extension)
         * @description Scope: `manage`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        delete: operations["revokePortalAccess"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/portal/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The portal session making the request: its application and expiry (extension)
         * @description Called with a portal session as the bearer credential; an API key gets 403.
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        get: operations["getPortalSession"];
        put?: never;
        /**
         * Exchange a portal link for a session (extension)
         * @description Called with the link token as the bearer credential (Authorization: Bearer plink.…), once; answers the session credential. An API key gets 403; a used, expired or revoked link 401.
         *
         *     Scope: `any key of the namespace`. Rate category: `management` (100 requests per minute per namespace by default).
         */
        post: operations["createPortalSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This OpenAPI document
         * @description Served without authentication, without the envelope and without rate-limit headers.
         */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Namespace: {
            name: string;
            /**
             * Format: uri
             * @description Base URL clients of this namespace use
             */
            endpoint: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description `active` */
            status: string;
        };
        PublishResult: {
            message_id: string;
            topic: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            timestamp: string;
            /** @description Payload length in UTF-8 bytes */
            size: number;
        };
        BatchPublishResult: {
            published_count: number;
            /** @description In request order */
            message_ids: string[];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            timestamp: string;
        };
        /** @description A queue as create and list answer it */
        QueueSummary: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Messages stored and not yet acknowledged or expired (visible plus in flight) */
            message_count: number;
            /** @description Distinct consumers (by key, or by `consumer_id`) that consumed in the last 5 minutes */
            consumer_count: number;
        };
        Queue: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Messages stored and not yet acknowledged or expired (visible plus in flight) */
            message_count: number;
            /** @description Distinct consumers (by key, or by `consumer_id`) that consumed in the last 5 minutes */
            consumer_count: number;
            max_size_mb: number;
            message_ttl_seconds: number;
            /** @description A message is delivered at most 1 + max_retries times */
            max_retries: number;
            /** @description Topic that receives messages whose deliveries are used up; null when they are dropped */
            dead_letter_topic: string | null;
            /** @description Extension, present only when set: delay of messages published without their own delay_seconds */
            delay_seconds?: number;
            /**
             * @description Extension, present only for an ordered queue: each partition_key is delivered in publish order (an SQS FIFO queue)
             * @enum {string}
             */
            ordering?: "fifo";
        };
        QueueList: {
            queues: components["schemas"]["QueueSummary"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        QueueMessage: {
            message_id: string;
            payload: string;
            /** @description MIME type given at publish (default application/json) */
            content_type: string;
            /** @description Custom properties of the message (string values) */
            properties: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            publish_time: string;
            /** @description Deliveries of this message, this one included */
            receive_count: number;
            /** @description Acknowledges this delivery; a later delivery gets a new handle */
            receipt_handle: string;
        };
        QueueConsumeResult: {
            messages: components["schemas"]["QueueMessage"][];
            count: number;
        };
        AckResult: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            acknowledged_at: string;
        };
        BatchAckResult: {
            /** @description One result per entry, in request order */
            results: ({
                message_id: string;
                /** @constant */
                acknowledged: true;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
                 */
                acknowledged_at: string;
            } | {
                message_id: string;
                /** @constant */
                acknowledged: false;
                error: {
                    /** @enum {string} */
                    code: "MESSAGE_NOT_FOUND" | "INVALID_RECEIPT_HANDLE";
                    message: string;
                };
            })[];
            acknowledged_count: number;
        };
        StreamCreated: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description Days a message is retained */
            retention_days: number;
            /** @description Size at which the oldest messages are trimmed */
            max_size_gb: number;
            /** @description Partitions; a message with a partition_key always goes to the same one */
            partition_count: number;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            message_count: number;
            consumer_count: number;
        };
        /** @description A stream as list answers it */
        StreamSummary: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Retained messages */
            message_count: number;
            /** @description Consumer groups that have consumed or committed */
            consumer_count: number;
            /**
             * @description Present only when `consumer_count` is a lower bound: the resource has more than 1,000 member records, and one count reads the first 1,000
             * @constant
             */
            consumer_count_is_lower_bound?: true;
        };
        Stream: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Retained messages */
            message_count: number;
            /** @description Consumer groups that have consumed or committed */
            consumer_count: number;
            /** @description Days a message is retained */
            retention_days: number;
            /** @description Size at which the oldest messages are trimmed */
            max_size_gb: number;
            /** @description Partitions; a message with a partition_key always goes to the same one */
            partition_count: number;
            /** @description Oldest retained offset */
            earliest_offset: number;
            /** @description The offset the next message will get (last assigned + 1; 0 for an empty stream) */
            latest_offset: number;
            /**
             * @description Present only when `consumer_count` is a lower bound: the resource has more than 1,000 member records, and one count reads the first 1,000
             * @constant
             */
            consumer_count_is_lower_bound?: true;
        };
        StreamList: {
            streams: components["schemas"]["StreamSummary"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        StreamMessage: {
            offset: number;
            partition: number;
            payload: string;
            /** @description MIME type given at publish (default application/json) */
            content_type: string;
            /** @description Custom properties of the message (string values) */
            properties: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            publish_time: string;
        };
        StreamConsumeResult: {
            messages: components["schemas"]["StreamMessage"][];
            /** @description Last returned offset + 1, or the start position when nothing was returned */
            next_offset: number;
            count: number;
        };
        CommitResult: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            committed_at: string;
        };
        /** @description A subscription as create and list answer it */
        SubscriptionSummary: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Retained messages */
            message_count: number;
            /** @description Subscriber ids seen within the message TTL */
            subscriber_count: number;
            /**
             * @description Present only when `subscriber_count` is a lower bound: the resource has more than 1,000 member records, and one count reads the first 1,000
             * @constant
             */
            subscriber_count_is_lower_bound?: true;
        };
        Subscription: {
            name: string;
            /** @description MQTT 5 topic filter: `+` matches one level, `#` (last level only) any number of levels including none */
            topic_filter: string;
            /** @description `active` */
            status: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /** @description Retained messages */
            message_count: number;
            /** @description Subscriber ids seen within the message TTL */
            subscriber_count: number;
            max_size_mb: number;
            message_ttl_seconds: number;
            /**
             * @description Present only when `subscriber_count` is a lower bound: the resource has more than 1,000 member records, and one count reads the first 1,000
             * @constant
             */
            subscriber_count_is_lower_bound?: true;
        };
        SubscriptionList: {
            subscriptions: components["schemas"]["SubscriptionSummary"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        SubscriptionMessage: {
            message_id: string;
            payload: string;
            /** @description MIME type given at publish (default application/json) */
            content_type: string;
            /** @description Custom properties of the message (string values) */
            properties: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            publish_time: string;
        };
        SubscriptionConsumeResult: {
            messages: components["schemas"]["SubscriptionMessage"][];
            count: number;
        };
        /** @description A webhook configuration; never carries the secret. Keys with the `manage` scope see every field; other keys see only `name`, `topic_filter`, `enabled`, `url` (its origin: scheme, host and port), `status`, `disabled_reason`, `disabled_at`, `created_at` and `updated_at` */
        Webhook: {
            name: string;
            url: string;
            topic_filter: string;
            method?: ("POST" | "PUT" | "PATCH") | null;
            enabled: boolean;
            headers?: {
                [key: string]: string;
            };
            body_template?: {
                [key: string]: unknown;
            } | null;
            timeout?: number;
            retry_count?: number;
            retry_delay?: number;
            max_retry_delay?: number;
            backoff_multiplier?: number;
            dead_letter_topic?: string | null;
            on_failure?: ("send_to_dlq" | {
                topic: string;
                payload: string;
            }) | null;
            on_success?: {
                topic: string;
                payload: string;
            } | null;
            condition?: {
                field: string;
                operator: string;
                value: number | string;
            } | null;
            tls?: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            } | null;
            max_payload_size?: number;
            compression?: "gzip" | null;
            debug?: boolean;
            log_requests?: boolean;
            log_responses?: boolean;
            rate_limit?: number | null;
            max_in_flight?: number | null;
            failure_threshold?: number;
            disable_after?: number;
            application?: string | null;
            /**
             * @description Where `failure_threshold` comes from: `webhook` (set on it), `namespace` (the namespace's default, set by an operator: npm run admin -- webhook-health set), `default`
             * @enum {string}
             */
            failure_threshold_source?: "webhook" | "namespace" | "default";
            /**
             * @description Where `disable_after` comes from: `webhook` (set on it), `namespace` (the namespace's default, set by an operator: npm run admin -- webhook-health set), `default`
             * @enum {string}
             */
            disable_after_source?: "webhook" | "namespace" | "default";
            /**
             * @description `active`; `failing` while its endpoint fails (circuit open: one probe at a time); `disabled` by the user (`enabled: false`) or by health
             * @enum {string}
             */
            status: "active" | "failing" | "disabled";
            /**
             * @description `user` when `enabled` is false, `health` when health disabled it (PATCH `{"enabled": true}` re-enables); null unless disabled
             * @enum {string|null}
             */
            disabled_reason: "user" | "health" | null;
            /**
             * Format: date-time
             * @description When health disabled the webhook; null otherwise
             */
            disabled_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            updated_at: string;
        };
        /** @description The created webhook, with its signing secret (shown only here) */
        WebhookCreated: {
            name: string;
            url: string;
            topic_filter: string;
            method: ("POST" | "PUT" | "PATCH") | null;
            enabled: boolean;
            headers: {
                [key: string]: string;
            };
            body_template: {
                [key: string]: unknown;
            } | null;
            timeout: number;
            retry_count: number;
            retry_delay: number;
            max_retry_delay: number;
            backoff_multiplier: number;
            dead_letter_topic: string | null;
            on_failure: ("send_to_dlq" | {
                topic: string;
                payload: string;
            }) | null;
            on_success: {
                topic: string;
                payload: string;
            } | null;
            condition: {
                field: string;
                operator: string;
                value: number | string;
            } | null;
            tls: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            } | null;
            max_payload_size: number;
            compression: "gzip" | null;
            debug: boolean;
            log_requests: boolean;
            log_responses: boolean;
            rate_limit: number | null;
            max_in_flight: number | null;
            failure_threshold: number;
            disable_after: number;
            application: string | null;
            /**
             * @description Where `failure_threshold` comes from: `webhook` (set on it), `namespace` (the namespace's default, set by an operator: npm run admin -- webhook-health set), `default`
             * @enum {string}
             */
            failure_threshold_source: "webhook" | "namespace" | "default";
            /**
             * @description Where `disable_after` comes from: `webhook` (set on it), `namespace` (the namespace's default, set by an operator: npm run admin -- webhook-health set), `default`
             * @enum {string}
             */
            disable_after_source: "webhook" | "namespace" | "default";
            /**
             * @description `active`; `failing` while its endpoint fails (circuit open: one probe at a time); `disabled` by the user (`enabled: false`) or by health
             * @enum {string}
             */
            status: "active" | "failing" | "disabled";
            /**
             * @description `user` when `enabled` is false, `health` when health disabled it (PATCH `{"enabled": true}` re-enables); null unless disabled
             * @enum {string|null}
             */
            disabled_reason: "user" | "health" | null;
            /**
             * Format: date-time
             * @description When health disabled the webhook; null otherwise
             */
            disabled_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            updated_at: string;
            /** @description Signing secret (`whsec_` + base64 of 32 bytes); returned only by create, store it */
            secret: string;
        };
        WebhookList: {
            webhooks: components["schemas"]["Webhook"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        WebhookStatus: {
            name: string;
            /**
             * @description `active`; `failing` while its endpoint fails (circuit open: one probe at a time); `disabled` by the user (`enabled: false`) or by health
             * @enum {string}
             */
            status: "active" | "failing" | "disabled";
            /**
             * @description `user` when `enabled` is false, `health` when health disabled it (PATCH `{"enabled": true}` re-enables); null unless disabled
             * @enum {string|null}
             */
            disabled_reason: "user" | "health" | null;
            /**
             * Format: date-time
             * @description When health disabled the webhook; null otherwise
             */
            disabled_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            last_delivery: string | null;
            /** @description Successful deliveries (per delivery, not per attempt) */
            success_count: number;
            /** @description Deliveries that failed after their last retry */
            failure_count: number;
            last_error: string | null;
            /**
             * Format: date-time
             * @description When the next retry of a pending delivery is due
             */
            next_retry: string | null;
            /** @description Hooks (on_success, on_failure, send_to_dlq) the namespace publish rate limit refused: they published nothing */
            hook_failure_count: number;
            /** @description Why the latest refused hook published nothing */
            last_hook_error: string | null;
        };
        WebhookDeliveryList: {
            /** @description Newest first */
            deliveries: components["schemas"]["WebhookDeliveryAttempt"][];
            /** @description Pass as `cursor` for the next page; null on the last page */
            next_cursor: string | null;
            /** @description The page size used */
            limit: number;
        };
        WebhookDeliveryAttempt: {
            /** @description The message delivered (also the `webhook-id` header) */
            message_id: string;
            /** @description 1 for the first attempt of a delivery, counting its retries */
            attempt: number;
            /**
             * Format: date-time
             * @description When the request started
             */
            attempted_at: string;
            duration_ms: number;
            /** @description Status the receiver answered; null when none came */
            status_code: number | null;
            /** @enum {string} */
            outcome: "succeeded" | "failed";
            /** @description One-line reason of a failure: `HTTP 500`, `timeout after 10 s`, `connection refused`, `redirect refused`, `payload too large` */
            error: string | null;
            /** @description No attempt of this delivery follows (it succeeded, or its retries are used up) */
            final: boolean;
            /** @description The attempt belongs to a replay */
            replay: boolean;
        };
        WebhookReplay: {
            message_id: string;
            /** @description Names this replay */
            replay_id: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            queued_at: string;
        };
        WebhookBulkReplay: {
            /** @description Deliveries queued */
            queued: number;
            /**
             * Format: date-time
             * @description Call again with this `since` to queue the rest; null when none are left
             */
            next_since: string | null;
        };
        WebhookSecretRotated: {
            name: string;
            /** @description The new signing secret; shown only here, store it */
            secret: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            rotated_at: string;
            /**
             * Format: date-time
             * @description Until then the old secret signs too; null when the grace period is 0
             */
            previous_secret_expires_at: string | null;
        };
        WebhookTestResult: {
            /** @description Whether the target answered 2xx */
            success: boolean;
            /** @description Status the target answered */
            status_code: number | null;
            response_time_ms: number;
            /** @description One-line reason of a failure */
            error: string | null;
        };
        Deleted: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            deleted_at: string;
        };
        DeliveryCancelled: {
            message_id: string;
            /** @enum {string} */
            status: "cancelled";
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            cancelled_at: string;
            /**
             * Format: date-time
             * @description When the message would have been delivered
             */
            deliver_at: string;
        };
        Schedule: {
            name: string;
            /** @description IANA time zone of the cron */
            timezone: string;
            topic: string;
            /** @description With `{{.scheduled_time}}` and `{{.schedule}}` placeholders; `[redacted]` for keys without `manage`, as are property values and `partition_key` */
            payload: string;
            /** @description Custom properties of the message (string values) */
            properties: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            start_at: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            end_at: string | null;
            enabled: boolean;
            /**
             * Format: date-time
             * @description null when disabled or past end_at
             */
            next_run_at: string | null;
            /**
             * Format: date-time
             * @description The scheduled time of the last run made
             */
            last_run_at: string | null;
            /** @description Message id of the last run that published */
            last_message_id: string | null;
            /** @description Why the last run published nothing (e.g. TOPIC_NOT_FOUND, or RATE_LIMIT_EXCEEDED still refused 5 minutes after its time); null when it published */
            last_error: string | null;
            /** @description The last scheduled times a tick reached more than 5 minutes late (an outage) and skipped: the first missed time is made once, the times after it up to `until` are not */
            last_skipped: {
                /**
                 * Format: date-time
                 * @description The first scheduled time skipped
                 */
                from: string;
                /**
                 * Format: date-time
                 * @description The first time made again after the skipped ones (not skipped); null when none (end_at)
                 */
                until: string | null;
            } | null;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            updated_at: string;
            /** @description 5 fields: minute hour day-of-month month day-of-week (one of cron and every) */
            cron?: string;
            /** @description Seconds between runs (one of cron and every) */
            every?: number;
            content_type?: string;
            partition_key?: string;
        };
        ScheduleList: {
            schedules: components["schemas"]["Schedule"][];
            limit: number;
            /** @description Pass as `cursor` for the next page; null on the last */
            next_cursor: string | null;
        };
        EventType: {
            /** @description A topic or MQTT topic filter */
            name: string;
            description: string | null;
            /** @description JSON Schema (draft 2020-12) of the payload, or null */
            schema: Record<string, never> | null;
            /** @description Whether a publish this event type applies to must satisfy the schema (422 otherwise) */
            enforce: boolean;
            /** @description Example payloads: a string is a payload as published, any other value the parsed payload */
            examples: unknown[];
            /** @description 1 at create, one more at every change */
            version: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            updated_at: string;
        };
        EventTypeList: {
            event_types: components["schemas"]["EventType"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        /** @description An AsyncAPI 3.0 document (https://www.asyncapi.com/docs/reference/specification/v3.0.0) */
        AsyncApiDocument: {
            /** @constant */
            asyncapi: "3.0.0";
            info: Record<string, never>;
            defaultContentType?: string;
            channels: Record<string, never>;
            operations: Record<string, never>;
            components: Record<string, never>;
        };
        Error: {
            /** @description Machine-readable error code, e.g. QUEUE_NOT_FOUND */
            code: string;
            /** @description What went wrong and what to do */
            message: string;
            /** @description Always an object; validation errors carry `fields`, rate limits `category`, `limit` and `reset` */
            details: {
                fields?: components["schemas"]["FieldProblem"][];
            };
        };
        FieldProblem: {
            /** @description Dotted path of the field, e.g. messages.3.payload */
            field: string;
            message: string;
        };
        /** @description The envelope of every error answer */
        ErrorEnvelope: {
            /** @constant */
            success: false;
            data: null;
            error: components["schemas"]["Error"];
        };
        NamespaceAccess: {
            namespace: string;
            /** @description Id of the key that made the request (never the key) */
            key_id: string;
            /** @description `publish`, `consume`, `manage` or `*`; every key may read */
            scopes: string[];
            rate_limits: {
                /** @enum {string} */
                category: "publish" | "consume" | "management";
                /** @description Requests per minute */
                limit: number;
                /** @description Requests left in the current minute (this request counted under management) */
                remaining: number;
                /** @description Unix time (s) the current window ends */
                reset: number;
            }[];
        };
        QueueStats: {
            name: string;
            /** @description Messages a consume can receive now (SQS ApproximateNumberOfMessages) */
            visible: number;
            /** @description Received and neither acknowledged nor visible again yet (ApproximateNumberOfMessagesNotVisible) */
            in_flight: number;
            /** @description Published with a delay not yet over (ApproximateNumberOfMessagesDelayed) */
            delayed: number;
            /** @description Seconds since the oldest message not yet acknowledged, dead-lettered or expired was published (in flight and delayed ones included); null when there is none. Read from the queue's expiry buckets, not SQS: an upper bound, at most `oldest_message_age_precision_seconds` over the true age, never under it */
            oldest_message_age_seconds: number | null;
            /** @description The bound's width: the queue's expiry bucket width, a tenth of its TTL between 1 and 60 s */
            oldest_message_age_precision_seconds: number;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            measured_at: string;
        };
        QueueRedrive: {
            queue: string;
            topic: string;
            /** @description Published to the topic and removed from the queue */
            moved: number;
            /** @description Published, but not confirmed removed: they may move again */
            published_not_removed: number;
            /** @description Found past their TTL and removed */
            expired: number;
            /** @description message_count of the queue afterwards; call again while it is above 0 */
            remaining: number;
        };
        StreamGroups: {
            name: string;
            earliest_offset: number;
            /** @description The offset the next message gets */
            latest_offset: number;
            partitions: {
                partition: number;
                /** @description One past the last offset written to this partition */
                next_offset: number;
            }[];
            groups: {
                group: string;
                /** @description The group-wide committed offset (a commit without `partition`) */
                committed_offset: number | null;
                /**
                 * Format: date-time
                 * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
                 */
                committed_at: string | null;
                partitions: {
                    partition: number;
                    /** @description The partition's own commit, else the group-wide one */
                    committed_offset: number | null;
                    /** @description Offsets between the committed offset and the partition's next offset: the most messages left (offsets are numbered across partitions) */
                    lag: number;
                }[];
            }[];
            /** @description More members exist than the page shows (raise `limit`, at most 100) */
            more: boolean;
        };
        SubscriptionSubscribers: {
            name: string;
            /** @description Oldest position retained */
            earliest_position: number;
            /** @description The position the next message gets */
            next_position: number;
            subscribers: {
                subscriber_id: string;
                /** @description The next position this subscriber reads */
                cursor: number;
                /** @description Retained positions it has not read yet */
                lag: number;
                /**
                 * Format: date-time
                 * @description Its last consume
                 */
                last_seen: string;
            }[];
            /** @description More members exist than the page shows (raise `limit`, at most 100) */
            more: boolean;
        };
        /** @description An application: one of the platform's customers */
        Application: {
            /** @description The platform's own id of its customer */
            uid: string;
            name: string | null;
            /** @description The platform's labels: at most 16 string values, 2048 bytes as JSON */
            metadata: {
                [key: string]: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            created_at: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            updated_at: string;
        };
        ApplicationList: {
            applications: components["schemas"]["Application"][];
            /** @description Number of items in all pages */
            total: number;
            /** @description The page size used (echoes the request) */
            limit: number;
            /** @description Items skipped (echoes the request) */
            offset: number;
        };
        ApplicationDeleted: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            deleted_at: string;
            /** @description Webhooks of the application deleted with it */
            webhooks_deleted: number;
        };
        PortalAccess: {
            /**
             * Format: uri
             * @description The portal page with a single-use link token in its fragment; hand it to the customer
             */
            url: string;
            /**
             * Format: date-time
             * @description The link works once, until then (10 minutes)
             */
            expires_at: string;
            /** @description Days the session it opens lasts */
            session_expires_after_days: number;
        };
        PortalAccessRevoked: {
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            revoked_at: string;
        };
        PortalSessionCreated: {
            /** @description Bearer credential of the session (send as Authorization: Bearer); shown only here */
            session_token: string;
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            expires_at: string;
            namespace: string;
            application: {
                uid: string;
                name: string | null;
            };
        };
        PortalSession: {
            namespace: string;
            application: components["schemas"]["Application"];
            /**
             * Format: date-time
             * @description ISO 8601 UTC with milliseconds, e.g. 2026-11-22T10:00:00.000Z
             */
            expires_at: string;
        };
        PublishRequest: {
            payload: string;
            content_type?: string;
            /** @description Custom properties (string values); `x-hop` counts republishes by the service; `x-application` is the application a message is addressed to (set by `application`) */
            properties?: {
                [key: string]: string;
            };
            partition_key?: string;
            delay_seconds?: number;
            deliver_at?: string;
            /** @description Extension: the uid of the application the message is for. Webhooks of that application receive it; webhooks of another application never do (nor any message without `application`); webhooks of no application receive it as usual. Kept as the property `x-application`. An application that does not exist: 404 APPLICATION_NOT_FOUND, nothing stored */
            application?: string;
        };
        PublishBatchRequest: {
            messages: {
                payload: string;
                content_type?: string;
                properties?: {
                    [key: string]: string;
                };
                partition_key?: string;
                delay_seconds?: number;
                deliver_at?: string;
                /** @description Extension: the uid of the application the message is for. Webhooks of that application receive it; webhooks of another application never do (nor any message without `application`); webhooks of no application receive it as usual. Kept as the property `x-application`. An application that does not exist: 404 APPLICATION_NOT_FOUND, nothing stored */
                application?: string;
            }[];
        };
        CreateQueueRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @default 1024 */
            max_size_mb?: number;
            /** @default 86400 */
            message_ttl_seconds?: number;
            /** @default 3 */
            max_retries?: number;
            /** @description Topic name that receives failed messages */
            dead_letter_topic?: string;
            /** @default 0 */
            delay_seconds?: number;
            /** @default none */
            ordering?: string;
        };
        ConsumeQueueRequest: {
            /** @default 1 */
            max_messages?: number;
            /** @default 30 */
            timeout_seconds?: number;
            /** @default 300 */
            visibility_timeout_seconds?: number;
            /** @description Counts this consumer in consumer_count instead of the API key */
            consumer_id?: string;
        };
        AckQueueMessagesRequest: {
            entries: {
                message_id: string;
                receipt_handle: string;
            }[];
        };
        RedriveQueueRequest: {
            to_topic: string;
            /** @default 100 */
            max?: number;
        };
        AckQueueMessageRequest: {
            receipt_handle: string;
        };
        CreateStreamRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @default 7 */
            retention_days?: number;
            /** @default 10 */
            max_size_gb?: number;
            /** @default 1 */
            partition_count?: number;
        };
        ConsumeStreamRequest: {
            consumer_group: string;
            /** @description `earliest`, `latest`, or an offset (number or string of digits) */
            start_offset?: number | string;
            /** @default 100 */
            max_messages?: number;
            /** @default 30 */
            timeout_seconds?: number;
            partition?: number;
        };
        CommitStreamOffsetRequest: {
            consumer_group: string;
            offset: number;
            partition?: number;
        };
        CreateSubscriptionRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @default 512 */
            max_size_mb?: number;
            /** @default 3600 */
            message_ttl_seconds?: number;
        };
        ConsumeSubscriptionRequest: {
            subscriber_id: string;
            /** @default 10 */
            max_messages?: number;
            /** @default 30 */
            timeout_seconds?: number;
        };
        CreateWebhookRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            /** @description http or https URL of the receiver */
            url: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @description HTTP method of deliveries: POST, PUT or PATCH (case-insensitive) */
            method?: string;
            /** @default true */
            enabled?: boolean;
            headers?: {
                [key: string]: string;
            };
            body_template?: {
                [key: string]: unknown;
            };
            /** @default 10 */
            timeout?: number;
            retry_count?: number;
            max_retries?: number;
            /** @default 1 */
            retry_delay?: number;
            /** @default 300 */
            max_retry_delay?: number;
            /** @default 2 */
            backoff_multiplier?: number;
            /** @description Topic name that receives failed messages */
            dead_letter_topic?: string;
            /** @description `send_to_dlq` (publishes the original message to dead_letter_topic) or {topic, payload} with `{{.error}}` in the payload template */
            on_failure?: "send_to_dlq" | {
                topic: string;
                payload: string;
            };
            /** @description {topic, payload} published after a successful delivery; the payload template may use `{{.response}}` */
            on_success?: {
                topic: string;
                payload: string;
            };
            /** @description Delivers only messages whose `field` (dot path into the JSON payload, or `properties.<name>`) compares true against `value`; operators == != > >= < <= */
            condition?: {
                field: string;
                operator: string;
                value: number | string;
            };
            tls?: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            };
            /** @default 262144 */
            max_payload_size?: number;
            /** @enum {string} */
            compression?: "gzip";
            /** @default false */
            debug?: boolean;
            /** @default false */
            log_requests?: boolean;
            /** @default false */
            log_responses?: boolean;
            /** @description Signing secret (`whsec_` + base64 of 24 to 64 bytes); generated when left out */
            secret?: string;
            rate_limit?: number;
            max_in_flight?: number;
            failure_threshold?: number;
            disable_after?: number;
            application?: string;
        };
        TestWebhookRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            /** @description http or https URL of the receiver */
            url: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @description HTTP method of deliveries: POST, PUT or PATCH (case-insensitive) */
            method?: string;
            tls?: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            };
        };
        ReplaceWebhookRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name?: string;
            /** @description http or https URL of the receiver */
            url: string;
            /** @description MQTT 5 topic filter: `+` matches exactly one level, `#` (whole last level) any number of levels including none, e.g. `orders/#`, `orders/+/created` */
            topic_filter: string;
            /** @description HTTP method of deliveries: POST, PUT or PATCH (case-insensitive) */
            method?: string;
            /** @default true */
            enabled?: boolean;
            headers?: {
                [key: string]: string;
            };
            body_template?: {
                [key: string]: unknown;
            };
            /** @default 10 */
            timeout?: number;
            retry_count?: number;
            max_retries?: number;
            /** @default 1 */
            retry_delay?: number;
            /** @default 300 */
            max_retry_delay?: number;
            /** @default 2 */
            backoff_multiplier?: number;
            /** @description Topic name that receives failed messages */
            dead_letter_topic?: string;
            /** @description `send_to_dlq` (publishes the original message to dead_letter_topic) or {topic, payload} with `{{.error}}` in the payload template */
            on_failure?: "send_to_dlq" | {
                topic: string;
                payload: string;
            };
            /** @description {topic, payload} published after a successful delivery; the payload template may use `{{.response}}` */
            on_success?: {
                topic: string;
                payload: string;
            };
            /** @description Delivers only messages whose `field` (dot path into the JSON payload, or `properties.<name>`) compares true against `value`; operators == != > >= < <= */
            condition?: {
                field: string;
                operator: string;
                value: number | string;
            };
            tls?: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            };
            /** @default 262144 */
            max_payload_size?: number;
            /** @enum {string} */
            compression?: "gzip";
            /** @default false */
            debug?: boolean;
            /** @default false */
            log_requests?: boolean;
            /** @default false */
            log_responses?: boolean;
            /** @description Signing secret (`whsec_` + base64 of 24 to 64 bytes); generated when left out */
            secret?: string;
            rate_limit?: number;
            max_in_flight?: number;
            failure_threshold?: number;
            disable_after?: number;
            application?: string;
        };
        /** @description Any subset of the configuration fields: given fields replace the stored ones (top-level merge), a field given as null returns to its default or is removed; the result is validated like a create. */
        PatchWebhookRequest: {
            name?: string | null;
            url?: string | null;
            topic_filter?: string | null;
            method?: string | null;
            enabled?: boolean | null;
            headers?: {
                [key: string]: string;
            } | null;
            body_template?: {
                [key: string]: unknown;
            } | null;
            timeout?: number | null;
            retry_count?: number | null;
            max_retries?: number | null;
            retry_delay?: number | null;
            max_retry_delay?: number | null;
            backoff_multiplier?: number | null;
            dead_letter_topic?: string | null;
            on_failure?: ("send_to_dlq" | {
                topic: string;
                payload: string;
            }) | null;
            on_success?: {
                topic: string;
                payload: string;
            } | null;
            condition?: {
                field: string;
                operator: string;
                value: number | string;
            } | null;
            tls?: {
                verify_ssl?: boolean;
                ca_cert?: string;
                client_cert?: string;
                client_key?: string;
            } | null;
            max_payload_size?: number | null;
            compression?: "gzip" | null;
            debug?: boolean | null;
            log_requests?: boolean | null;
            log_responses?: boolean | null;
            secret?: string | null;
            rate_limit?: number | null;
            max_in_flight?: number | null;
            failure_threshold?: number | null;
            disable_after?: number | null;
            application?: string | null;
        };
        ReplayWebhookFailuresRequest: {
            since: string;
            /** @default failed */
            status?: string;
        };
        RotateWebhookSecretRequest: {
            /** @default 86400 */
            grace_seconds?: number;
        };
        CreateScheduleRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name: string;
            cron?: string;
            every?: number;
            timezone?: string;
            topic: string;
            payload: string;
            content_type?: string;
            /** @description Custom properties (string values); `x-hop` counts republishes by the service; `x-application` is the application a message is addressed to (set by `application`) */
            properties?: {
                [key: string]: string;
            };
            partition_key?: string;
            start_at?: string | null;
            end_at?: string | null;
            enabled?: boolean;
        };
        ReplaceScheduleRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name?: string;
            cron?: string;
            every?: number;
            timezone?: string;
            topic: string;
            payload: string;
            content_type?: string;
            /** @description Custom properties (string values); `x-hop` counts republishes by the service; `x-application` is the application a message is addressed to (set by `application`) */
            properties?: {
                [key: string]: string;
            };
            partition_key?: string;
            start_at?: string | null;
            end_at?: string | null;
            enabled?: boolean;
        };
        PatchScheduleRequest: {
            cron?: string;
            every?: number;
            timezone?: string;
            topic?: string;
            payload?: string;
            content_type?: string;
            /** @description Custom properties (string values); `x-hop` counts republishes by the service; `x-application` is the application a message is addressed to (set by `application`) */
            properties?: {
                [key: string]: string;
            };
            partition_key?: string;
            start_at?: string | null;
            end_at?: string | null;
            enabled?: boolean;
        };
        CreateEventTypeRequest: {
            /** @description A topic (`orders/created`) or MQTT topic filter (`orders/#`, `+/created`); 1 to 256 characters */
            name: string;
            description?: string;
            schema?: {
                [key: string]: unknown;
            };
            enforce?: boolean;
            examples?: unknown[];
        };
        PatchEventTypeRequest: {
            description?: string | null;
            schema?: {
                [key: string]: unknown;
            } | null;
            enforce?: boolean;
            examples?: unknown[] | null;
        };
        CreateApplicationRequest: {
            uid: string;
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name?: string;
            metadata?: {
                [key: string]: string;
            };
        };
        PatchApplicationRequest: {
            /** @description Resource name: 1 to 128 characters of A-Z a-z 0-9 . _ - starting with a letter or digit */
            name?: string | null;
            metadata?: {
                [key: string]: string;
            } | null;
        };
        CreatePortalAccessRequest: {
            /** @default 7 */
            session_days?: number;
        };
    };
    responses: {
        /** @description Missing, malformed, unknown or revoked API key, or a key of another namespace than the Host names (no rate-limit headers) */
        Unauthorized: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "INVALID_API_KEY";
                    };
                };
            };
        };
        /** @description The key lacks the operation's scope, or a portal session (docs/portal.md) called an operation it may not */
        Forbidden: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "INSUFFICIENT_PERMISSIONS";
                    };
                };
            };
        };
        /** @description Over the namespace's limit for the rate category in this minute (for a portal session, its application's own limit: `details.application` names it); `details` has category, limit and reset */
        RateLimited: {
            headers: {
                "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "RATE_LIMIT_EXCEEDED";
                    };
                };
            };
        };
        /** @description A bug or a failed dependency; the message has no internals */
        InternalError: {
            headers: {
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "INTERNAL_ERROR";
                    };
                };
            };
        };
        /** @description A dependency throttled the request, was briefly unavailable or did not answer in time: retry after `Retry-After` seconds. Like a 500, the request may or may not have taken effect (publishes are at least once; send an Idempotency-Key to make a retry safe) */
        ServiceUnavailable: {
            headers: {
                "Retry-After": components["headers"]["Retry-After-Unavailable"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "SERVICE_UNAVAILABLE";
                    };
                };
            };
        };
        /** @description Known path, method not served (answered for any method a path does not list) */
        MethodNotAllowed: {
            headers: {
                Allow: components["headers"]["Allow"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["ErrorEnvelope"] & {
                    error?: {
                        /** @enum {unknown} */
                        code?: "METHOD_NOT_ALLOWED";
                    };
                };
            };
        };
    };
    parameters: {
        /** @description Page size; not an integer: 400, out of range: 422 */
        limit: number;
        /** @description Items to skip (items are ordered by name) */
        offset: number;
        /** @description Makes a retried publish answer the first result (201, same body, header Idempotent-Replayed: true) instead of storing again, within 24 hours, per namespace and topic. The same key with another body is 422; while the first request is in flight, 409 IDEMPOTENCY_KEY_IN_USE. */
        "Idempotency-Key": string;
    };
    requestBodies: never;
    headers: {
        /** @description Requests allowed per minute in the request's rate category */
        "X-RateLimit-Limit": number;
        /** @description Requests left in the current window */
        "X-RateLimit-Remaining": number;
        /** @description Unix time (seconds) when the window resets */
        "X-RateLimit-Reset": number;
        /** @description Seconds until the window resets (at least 1) */
        "Retry-After": number;
        /** @description Seconds to wait before retrying (at least 1) */
        "Retry-After-Unavailable": number;
        /** @description `true` when the answer replays the first request with the same Idempotency-Key */
        "Idempotent-Replayed": "true";
        /** @description The methods the path serves */
        Allow: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getNamespace: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Namespace"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getNamespaceAccess: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["NamespaceAccess"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    publish: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried publish answer the first result (201, same body, header Idempotent-Replayed: true) instead of storing again, within 24 hours, per namespace and topic. The same key with another body is 422; while the first request is in flight, 409 IDEMPOTENCY_KEY_IN_USE. */
                "Idempotency-Key"?: components["parameters"]["Idempotency-Key"];
            };
            path: {
                /** @description Topic name: 1 to 256 characters, `/`-separated levels, no empty level, no `+`, `#` or control characters. The topic may contain `/`: send its levels as path segments (`/topics/orders/eu/created/messages`); percent-encoded levels (`%2F` included) are decoded. */
                topic: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PublishRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["PublishResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "TOPIC_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "IDEMPOTENCY_KEY_IN_USE" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A payload above 262144 bytes (256 KiB) of UTF-8, or a batch body above 1048576 bytes (1 MiB) */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            /** @description Over the namespace's publish requests of this minute (`details.category` `publish`), or over its fan-out budget: the writes this publish would cause, messages x bindings reached, do not fit what is left of the minute's budget (`details.category` `fanout`, with `limit`, `reset` and `writes`; default 100000 a minute). Nothing is stored */
            429: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "RATE_LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    publishBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retried publish answer the first result (201, same body, header Idempotent-Replayed: true) instead of storing again, within 24 hours, per namespace and topic. The same key with another body is 422; while the first request is in flight, 409 IDEMPOTENCY_KEY_IN_USE. */
                "Idempotency-Key"?: components["parameters"]["Idempotency-Key"];
            };
            path: {
                /** @description Topic name: 1 to 256 characters, `/`-separated levels, no empty level, no `+`, `#` or control characters. The topic may contain `/`: send its levels as path segments (`/topics/orders/eu/created/messages`); percent-encoded levels (`%2F` included) are decoded. */
                topic: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PublishBatchRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["BatchPublishResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "TOPIC_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "IDEMPOTENCY_KEY_IN_USE" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A payload above 262144 bytes (256 KiB) of UTF-8, or a batch body above 1048576 bytes (1 MiB) */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            /** @description Over the namespace's publish requests of this minute (`details.category` `publish`), or over its fan-out budget: the writes this publish would cause, messages x bindings reached, do not fit what is left of the minute's budget (`details.category` `fanout`, with `limit`, `reset` and `writes`; default 100000 a minute). Nothing is stored */
            429: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "RATE_LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    cancelDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Id of a received message (from consume) */
                message_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["DeliveryCancelled"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "MESSAGE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "ALREADY_DELIVERED";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listQueues: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["QueueList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createQueue: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateQueueRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["QueueSummary"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "QUEUE_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Queue"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    consumeQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["ConsumeQueueRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["QueueConsumeResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            /** @description Over the namespace's limit for the rate category in this minute (RATE_LIMIT_EXCEEDED), or (TOO_MANY_IN_FLIGHT) the queue has too many messages received and not yet acknowledged: acknowledge messages or let their visibility end, then retry after `Retry-After` seconds */
            429: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    "Retry-After": components["headers"]["Retry-After"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "RATE_LIMIT_EXCEEDED" | "TOO_MANY_IN_FLIGHT";
                        };
                    };
                };
            };
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    ackQueueMessages: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AckQueueMessagesRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["BatchAckResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getQueueStats: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["QueueStats"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    redriveQueue: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RedriveQueueRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["QueueRedrive"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND" | "TOPIC_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    ackQueueMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Queue name */
                queue_name: string;
                /** @description Id of a received message (from consume) */
                message_id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AckQueueMessageRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["AckResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "QUEUE_NOT_FOUND" | "MESSAGE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_RECEIPT_HANDLE";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listStreams: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["StreamList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createStream: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateStreamRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["StreamCreated"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "STREAM_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getStream: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Stream name */
                stream_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Stream"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "STREAM_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteStream: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Stream name */
                stream_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "STREAM_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    consumeStream: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Stream name */
                stream_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ConsumeStreamRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["StreamConsumeResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "STREAM_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    commitStreamOffset: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Stream name */
                stream_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CommitStreamOffsetRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["CommitResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "STREAM_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listStreamGroups: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description Stream name */
                stream_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["StreamGroups"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "STREAM_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSubscriptions: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["SubscriptionList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateSubscriptionRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["SubscriptionSummary"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "SUBSCRIPTION_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription name */
                subscription_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Subscription"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SUBSCRIPTION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription name */
                subscription_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SUBSCRIPTION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    consumeSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Subscription name */
                subscription_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ConsumeSubscriptionRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["SubscriptionConsumeResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SUBSCRIPTION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSubscriptionSubscribers: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description Subscription name */
                subscription_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["SubscriptionSubscribers"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SUBSCRIPTION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhooks: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
                /** @description Only the webhooks of this application (its uid); a portal session always sees only its own */
                application?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWebhookRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookCreated"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "WEBHOOK_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    testWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["TestWebhookRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookTestResult"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Webhook"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replaceWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReplaceWebhookRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Webhook"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PatchWebhookRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Webhook"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getWebhookStatus: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookStatus"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: number;
                /** @description `next_cursor` of the previous page; another value is 400 */
                cursor?: string;
                /** @description Only attempts that failed, or that succeeded; another value is 400 */
                status?: "failed" | "succeeded";
                /** @description Only the attempts of this message */
                message_id?: string;
            };
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookDeliveryList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replayWebhookDelivery: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
                /** @description Id of a received message (from consume) */
                message_id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookReplay"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND" | "MESSAGE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replayWebhookFailures: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReplayWebhookFailuresRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookBulkReplay"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    rotateWebhookSecret: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook name */
                webhook_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["RotateWebhookSecretRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["WebhookSecretRotated"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "WEBHOOK_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listSchedules: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: number;
                /** @description `next_cursor` of the previous page; another value is 422 */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["ScheduleList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateScheduleRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Schedule"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "SCHEDULE_ALREADY_EXISTS" | "SCHEDULE_LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A payload above 262144 bytes (256 KiB) of UTF-8, or a batch body above 1048576 bytes (1 MiB) */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description schedule_name */
                schedule_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Schedule"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SCHEDULE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    replaceSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description schedule_name */
                schedule_name: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ReplaceScheduleRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Schedule"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SCHEDULE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT";
                        };
                    };
                };
            };
            /** @description A payload above 262144 bytes (256 KiB) of UTF-8, or a batch body above 1048576 bytes (1 MiB) */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description schedule_name */
                schedule_name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SCHEDULE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchSchedule: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description schedule_name */
                schedule_name: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PatchScheduleRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Schedule"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "SCHEDULE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT";
                        };
                    };
                };
            };
            /** @description A payload above 262144 bytes (256 KiB) of UTF-8, or a batch body above 1048576 bytes (1 MiB) */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listEventTypes: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["EventTypeList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createEventType: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateEventTypeRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["EventType"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST" | "INVALID_TOPIC_FILTER";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "EVENT_TYPE_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getEventType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Event type name (a topic or filter): its levels as path segments, or percent-encoded (`/` as %2F); `#` always as %23 (`orders/%23` or `orders%2F%23` for `orders/#`) */
                event_type: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["EventType"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "EVENT_TYPE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteEventType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Event type name (a topic or filter): its levels as path segments, or percent-encoded (`/` as %2F); `#` always as %23 (`orders/%23` or `orders%2F%23` for `orders/#`) */
                event_type: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Deleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "EVENT_TYPE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchEventType: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Event type name (a topic or filter): its levels as path segments, or percent-encoded (`/` as %2F); `#` always as %23 (`orders/%23` or `orders%2F%23` for `orders/#`) */
                event_type: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PatchEventTypeRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["EventType"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "EVENT_TYPE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getAsyncApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["AsyncApiDocument"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description The document is larger than one response carries even without examples: read the event types in pages with GET /event-types */
            413: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    listApplications: {
        parameters: {
            query?: {
                /** @description Page size; not an integer: 400, out of range: 422 */
                limit?: components["parameters"]["limit"];
                /** @description Items to skip (items are ordered by name) */
                offset?: components["parameters"]["offset"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["ApplicationList"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createApplication: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateApplicationRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Application"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "APPLICATION_ALREADY_EXISTS" | "LIMIT_EXCEEDED";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Application uid: the platform's own customer id */
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Application"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    deleteApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Application uid: the platform's own customer id */
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["ApplicationDeleted"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    patchApplication: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Application uid: the platform's own customer id */
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["PatchApplicationRequest"];
            };
        };
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["Application"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description Conflict */
            409: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "CONFLICT";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createPortalAccess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Application uid: the platform's own customer id */
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: {
            content: {
                "application/json": components["schemas"]["CreatePortalAccessRequest"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["PortalAccess"];
                        error: null;
                    };
                };
            };
            /** @description Body not JSON or not an object, a field of the wrong type, a query value that is not an integer, or (INVALID_TOPIC_FILTER) a topic filter that is not MQTT syntax */
            400: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "INVALID_REQUEST";
                        };
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            /** @description A body larger than the gateway accepts (10 MB) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "MESSAGE_TOO_LARGE";
                        };
                    };
                };
            };
            /** @description A missing required field or a value out of range; `details.fields` names each field */
            422: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "VALIDATION_ERROR";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    revokePortalAccess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Application uid: the platform's own customer id */
                uid: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["PortalAccessRevoked"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getPortalSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description OK */
            200: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["PortalSession"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND" | "APPLICATION_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    createPortalSession: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Created */
            201: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        success: true;
                        data: components["schemas"]["PortalSessionCreated"];
                        error: null;
                    };
                };
            };
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            /** @description Not found; NAMESPACE_NOT_FOUND when the Host names a namespace that does not exist */
            404: {
                headers: {
                    "X-RateLimit-Limit": components["headers"]["X-RateLimit-Limit"];
                    "X-RateLimit-Remaining": components["headers"]["X-RateLimit-Remaining"];
                    "X-RateLimit-Reset": components["headers"]["X-RateLimit-Reset"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"] & {
                        error?: {
                            /** @enum {unknown} */
                            code?: "NAMESPACE_NOT_FOUND";
                        };
                    };
                };
            };
            429: components["responses"]["RateLimited"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        openapi: string;
                        info: Record<string, never>;
                        paths: Record<string, never>;
                    };
                };
            };
            405: components["responses"]["MethodNotAllowed"];
        };
    };
}
