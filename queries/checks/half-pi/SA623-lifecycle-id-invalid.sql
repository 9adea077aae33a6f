-- rule: SA623
-- requires: remote_runs.trace_id approval_audits.trace_id security_decisions lifecycle_outbox
-- what: a trace, span or event id that is not 32 lowercase hex, or a decision's approval or run id that is not 16 lowercase hex (rows written before the lifecycle columns keep '' and are not judged)
-- Spec §4.8, §4.11, §4.14, §4.15, §5, §10 invariant 22 (P). Parameters: none.
-- Output: tbl, row_id, session_id, message, evidence. Compaction outbox ids are UUIDv7 (SA620).
WITH ids (tbl, row_id, session_id, owner, col, value, size, required) AS (
    SELECT 'remote_runs', rowid, session_id, 'remote run ' || id, 'trace_id', trace_id, 32, 0 FROM remote_runs
    UNION ALL
    SELECT 'remote_runs', rowid, session_id, 'remote run ' || id, 'span_id', span_id, 32, 0 FROM remote_runs
    UNION ALL
    SELECT 'remote_runs', rowid, session_id, 'remote run ' || id, 'parent_span_id', parent_span_id, 32, 0
    FROM remote_runs
    UNION ALL
    SELECT 'approval_audits', rowid, conversation_id, 'approval ' || approval_id, 'trace_id', trace_id, 32, 0
    FROM approval_audits
    UNION ALL
    SELECT 'approval_audits', rowid, conversation_id, 'approval ' || approval_id, 'span_id', span_id, 32, 0
    FROM approval_audits
    UNION ALL
    SELECT
        'approval_audits', rowid, conversation_id, 'approval ' || approval_id, 'parent_span_id', parent_span_id,
        32, 0
    FROM approval_audits
    UNION ALL
    SELECT 'security_decisions', rowid, conversation_id, 'security decision ' || id, 'id', id, 32, 1
    FROM security_decisions
    UNION ALL
    SELECT 'security_decisions', rowid, conversation_id, 'security decision ' || id, 'trace_id', trace_id, 32, 1
    FROM security_decisions
    UNION ALL
    SELECT 'security_decisions', rowid, conversation_id, 'security decision ' || id, 'span_id', span_id, 32, 1
    FROM security_decisions
    UNION ALL
    SELECT
        'security_decisions', rowid, conversation_id, 'security decision ' || id, 'approval_id', approval_id, 16, 0
    FROM security_decisions
    UNION ALL
    SELECT 'security_decisions', rowid, conversation_id, 'security decision ' || id, 'run_id', run_id, 16, 0
    FROM security_decisions
    UNION ALL
    SELECT 'lifecycle_outbox', rowid, subject_id, 'security.decision outbox event ' || id, 'id', id, 32, 1
    FROM lifecycle_outbox WHERE event_type = 'security.decision'
    UNION ALL
    SELECT
        'lifecycle_outbox', rowid, subject_id, 'security.decision outbox event ' || id, 'trace_id', trace_id, 32, 1
    FROM lifecycle_outbox WHERE event_type = 'security.decision'
    UNION ALL
    SELECT
        'lifecycle_outbox', rowid, subject_id, 'security.decision outbox event ' || id, 'span_id', span_id, 32, 1
    FROM lifecycle_outbox WHERE event_type = 'security.decision'
)
SELECT
    tbl,
    row_id,
    session_id,
    substr(owner, 1, 120) || ': ' || col || ' ' || quote(substr(value, 1, 80)) || ' is not ' || size
    || ' lowercase hex characters' AS message,
    json_object('column', col, 'value', substr(value, 1, 80), 'expected_hex_length', size) AS evidence
FROM ids
WHERE (required = 1 OR value <> '') AND (length(value) <> size OR value GLOB '*[^0-9a-f]*')
ORDER BY tbl, row_id, col
