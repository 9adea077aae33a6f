-- rule: SA622
-- requires: approval_audits
-- what: an approval whose approval_id, or non-empty run_id, is not 16 lowercase hex characters
-- Spec §4.11, §5, §10 invariant 22 (P). Parameters: none. Output: tbl, row_id, session_id, message, evidence.
WITH checked AS (
    SELECT
        a.rowid AS row_id,
        a.approval_id,
        a.run_id,
        a.conversation_id,
        CASE
            WHEN length(a.approval_id) <> 16 OR a.approval_id GLOB '*[^0-9a-f]*'
                THEN 'approval_id is not 16 lowercase hex characters; '
            ELSE ''
        END
        || CASE
            WHEN a.run_id <> '' AND (length(a.run_id) <> 16 OR a.run_id GLOB '*[^0-9a-f]*')
                THEN 'run_id ' || quote(substr(a.run_id, 1, 80)) || ' is not 16 lowercase hex characters; '
            ELSE ''
        END AS problems
    FROM approval_audits AS a
)
SELECT
    'approval_audits' AS tbl,
    row_id,
    conversation_id AS session_id,
    'approval ' || quote(substr(approval_id, 1, 80)) || ' of session ' || conversation_id || ': '
    || rtrim(problems, '; ') AS message,
    json_object('approval_id', substr(approval_id, 1, 80), 'run_id', substr(run_id, 1, 80)) AS evidence
FROM checked
WHERE problems <> ''
ORDER BY row_id
