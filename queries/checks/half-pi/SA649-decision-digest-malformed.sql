-- rule: SA649
-- requires: security_decisions
-- what: a security decision's input_digest is neither empty, sha256: + 64 lowercase hex, nor 64 lowercase hex
-- Spec §4.14, §6.3, §6.4, §10 invariant 21 (P). Parameters: none. Output: tbl, row_id, message, session_id,
-- evidence. Bare hex is the remote approval digest of inner remote-tool rows; every other digest is prefixed.
SELECT
    'security_decisions' AS tbl,
    decision.rowid AS row_id,
    'security decision ' || decision.id || ' (' || decision.action_kind || ' ' || decision.resource_name
        || '): input_digest is not a digest; it has ' || length(decision.input_digest) || ' characters'
        AS message,
    decision.conversation_id AS session_id,
    json_object('id', decision.id, 'action_kind', decision.action_kind, 'resource_name', decision.resource_name,
        'length', length(decision.input_digest)) AS evidence
FROM security_decisions AS decision
WHERE NOT (
    typeof(decision.input_digest) = 'text'
    AND (
        decision.input_digest = ''
        OR (length(decision.input_digest) = 64 AND decision.input_digest NOT GLOB '*[^0-9a-f]*')
        OR (
            length(decision.input_digest) = 71
            AND substr(decision.input_digest, 1, 7) = 'sha256:'
            AND substr(decision.input_digest, 8) NOT GLOB '*[^0-9a-f]*'
        )
    )
)
ORDER BY decision.rowid
