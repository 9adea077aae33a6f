-- rule: SA647
-- requires: approval_audits
-- what: an approval's args_digest is not in its form: sha256: + 64 lowercase hex (local), 64 lowercase hex (remote)
-- Spec §6.2, §6.3, §10 invariants 14 and 21 (P). Parameters: none. Output: tbl, row_id, message, session_id,
-- evidence. The malformed value itself is never echoed: it may be the raw parameters a digest should hide.
SELECT
    'approval_audits' AS tbl,
    approval.rowid AS row_id,
    'approval ' || approval.approval_id || ': args_digest is not '
        || CASE WHEN approval.run_id = '' THEN 'sha256: + 64 lowercase hex (a local approval)'
            ELSE '64 lowercase hex without prefix (a remote approval of run ' || approval.run_id || ')' END
        || '; it has ' || length(approval.args_digest) || ' characters' AS message,
    approval.conversation_id AS session_id,
    json_object('approval_id', approval.approval_id, 'run_id', approval.run_id,
        'expected', CASE WHEN approval.run_id = '' THEN 'local' ELSE 'remote' END,
        'length', length(approval.args_digest)) AS evidence
FROM approval_audits AS approval
WHERE NOT (
    typeof(approval.args_digest) = 'text'
    AND CASE
        WHEN approval.run_id = '' THEN length(approval.args_digest) = 71
            AND substr(approval.args_digest, 1, 7) = 'sha256:'
            AND substr(approval.args_digest, 8) NOT GLOB '*[^0-9a-f]*'
        ELSE length(approval.args_digest) = 64 AND approval.args_digest NOT GLOB '*[^0-9a-f]*'
    END
)
ORDER BY approval.rowid
