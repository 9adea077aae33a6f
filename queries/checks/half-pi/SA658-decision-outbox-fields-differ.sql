-- rule: SA658
-- requires: security_decisions lifecycle_outbox
-- what: a security decision's outbox row differs in event_type, schema_version, trace, span, subject or created_at
-- Spec §4.15, §6.7, §10 invariant 17 (H). Rows with trace_id '' are not judged (§11). Parameters: none.
-- Output: tbl, row_id, message, session_id, evidence. Located at the outbox row. (The payload is SA659.)
SELECT
    'lifecycle_outbox' AS tbl,
    outbox.rowid AS row_id,
    'outbox row ' || outbox.id || ' of security decision ' || decision.id || ' differs in ' || rtrim(
        CASE WHEN outbox.event_type IS NOT 'security.decision' THEN 'event_type, ' ELSE '' END
        || CASE WHEN outbox.schema_version IS NOT 1 THEN 'schema_version, ' ELSE '' END
        || CASE WHEN outbox.trace_id IS NOT decision.trace_id THEN 'trace_id, ' ELSE '' END
        || CASE WHEN outbox.span_id IS NOT decision.span_id THEN 'span_id, ' ELSE '' END
        || CASE WHEN outbox.subject_id IS NOT decision.conversation_id THEN 'subject_id, ' ELSE '' END
        || CASE WHEN outbox.created_at IS NOT decision.created_at THEN 'created_at, ' ELSE '' END,
        ', '
    ) AS message,
    decision.conversation_id AS session_id,
    json_object(
        'id', decision.id,
        'outbox', json_object('event_type', outbox.event_type, 'schema_version', outbox.schema_version,
            'trace_id', outbox.trace_id, 'span_id', outbox.span_id, 'subject_id', outbox.subject_id,
            'created_at', outbox.created_at),
        'decision', json_object('trace_id', decision.trace_id, 'span_id', decision.span_id,
            'conversation_id', decision.conversation_id, 'created_at', decision.created_at)
    ) AS evidence
FROM security_decisions AS decision
JOIN lifecycle_outbox AS outbox ON outbox.id = decision.id
WHERE decision.trace_id <> ''
    AND (
        outbox.event_type IS NOT 'security.decision'
        OR outbox.schema_version IS NOT 1
        OR outbox.trace_id IS NOT decision.trace_id
        OR outbox.span_id IS NOT decision.span_id
        OR outbox.subject_id IS NOT decision.conversation_id
        OR outbox.created_at IS NOT decision.created_at
    )
ORDER BY outbox.rowid
