-- A gateway database of schema version 5, written by hitl-nb's SQLite store
-- (tests/gateway/schema5/make.py). Load it with sqlite3's executescript.
BEGIN TRANSACTION;
CREATE TABLE audience (
    reg_id text NOT NULL,
    prompt_id text NOT NULL,
    name text NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, name)
);
INSERT INTO "audience" VALUES('r-team','p-bob','bob');
INSERT INTO "audience" VALUES('r-team','p-pair','bob');
INSERT INTO "audience" VALUES('r-team','p-pair','carol');
INSERT INTO "audience" VALUES('r-team','p-odd','"q"');
INSERT INTO "audience" VALUES('r-team','p-odd','a,b');
INSERT INTO "audience" VALUES('r-team','p-odd','back\slash');
INSERT INTO "audience" VALUES('r-team','p-odd','o''brien');
INSERT INTO "audience" VALUES('r-team','p-odd','{x}');
INSERT INTO "audience" VALUES('r-team','p-odd','émilie');
INSERT INTO "audience" VALUES('r-team','p-two-named','alice');
INSERT INTO "audience" VALUES('r-team','p-two-named','dave');
INSERT INTO "audience" VALUES('r-team','p-doubt-dead','bob');
INSERT INTO "audience" VALUES('r-quote','p-quote','carol');
CREATE TABLE audit (
    id integer PRIMARY KEY AUTOINCREMENT,
    at double precision NOT NULL,
    reg_id text NOT NULL,
    task_id text NOT NULL,
    agent_url text NOT NULL,
    prompt_id text NOT NULL,
    responder text,
    display text,
    action text NOT NULL,
    status integer NOT NULL,
    reason text,
    payload_sha256 text,
    schema_sha256 text,
    responders text NOT NULL,
    agent_reply text
);
INSERT INTO "audit" VALUES(1,1750001000.0,'r-team','t-team','http://agent.example:8000/a2a','p-two','carol','Carol','held',202,NULL,'0000000000000000000000000000000000000000000000000000000000000000','5555555555555555555555555555555555555555555555555555555555555555','["carol"]',NULL);
INSERT INTO "audit" VALUES(2,1750001001.0,'r-team','t-team','http://agent.example:8000/a2a','p-bob','eve','Eve','refused',403,'''eve'' may not answer',NULL,'5555555555555555555555555555555555555555555555555555555555555555','["eve"]',NULL);
INSERT INTO "audit" VALUES(3,1750001002.0,'r-team','t-team','http://agent.example:8000/a2a','p-forwarded','alice','Alice','forwarded',200,NULL,'0000000000000000000000000000000000000000000000000000000000000002','5555555555555555555555555555555555555555555555555555555555555555','["alice"]','{"message": "ok"}');
INSERT INTO "audit" VALUES(4,1750001003.0,'r-team','t-team','http://agent.example:8000/a2a','p-doubt','bob','Bob','forwarding',202,NULL,'0000000000000000000000000000000000000000000000000000000000000003','5555555555555555555555555555555555555555555555555555555555555555','["bob"]','{"message": "lost"}');
INSERT INTO "audit" VALUES(5,1750001004.0,'r-team','t-team','http://agent.example:8000/a2a','p-dropped','bob','Bob','rejected',422,NULL,'0000000000000000000000000000000000000000000000000000000000000004','5555555555555555555555555555555555555555555555555555555555555555','["bob"]','{"message": "no", "validation_errors": [{"path": "/alpha", "message": "required"}]}');
INSERT INTO "audit" VALUES(6,1750001005.0,'r-team','t-team','http://agent.example:8000/a2a','p-failed','alice','Alice','failed',502,NULL,'0000000000000000000000000000000000000000000000000000000000000005','5555555555555555555555555555555555555555555555555555555555555555','["alice"]','{"message": "unreachable"}');
INSERT INTO "audit" VALUES(7,1750001006.0,'r-team','t-team','http://agent.example:8000/a2a','p-gone','carol','Carol','closed',409,NULL,'0000000000000000000000000000000000000000000000000000000000000006','5555555555555555555555555555555555555555555555555555555555555555','["carol"]','{"message": "closed"}');
INSERT INTO "audit" VALUES(8,1750001007.0,'r-team','t-team','http://agent.example:8000/a2a','p-doubt',NULL,NULL,'forwarded',200,NULL,'0000000000000000000000000000000000000000000000000000000000000007','5555555555555555555555555555555555555555555555555555555555555555','[]','{"message": "settled \u2713"}');
INSERT INTO "audit" VALUES(9,1750001008.0,'r-bob','t-bob','http://agent.example:8000/a2a','p-bob-two','bob','Bob','forwarded',200,NULL,'0000000000000000000000000000000000000000000000000000000000000008','5555555555555555555555555555555555555555555555555555555555555555','["bob"]','{"message": "ok"}');
INSERT INTO "audit" VALUES(10,1750001009.0,'r-server','t-server','http://agent.example:8000/a2a','p-server',NULL,'anonymous','refused',403,'no names',NULL,'5555555555555555555555555555555555555555555555555555555555555555','[]',NULL);
CREATE TABLE ballots (
    reg_id text NOT NULL,
    prompt_id text NOT NULL,
    responder text NOT NULL,
    payload text NOT NULL,
    at double precision NOT NULL,
    PRIMARY KEY (reg_id, prompt_id, responder)
);
INSERT INTO "ballots" VALUES('r-team','p-two','carol','{"alpha":true}',1750000030.0);
INSERT INTO "ballots" VALUES('r-team','p-three','alice','{"alpha":true}',1750000031.0);
INSERT INTO "ballots" VALUES('r-team','p-three','bob','{"alpha":false}',1750000032.0);
INSERT INTO "ballots" VALUES('r-team','p-two-named','dave','{"alpha":true,"zeta":"ok"}',1750000033.0);
INSERT INTO "ballots" VALUES('r-bob','p-bob-two','bob','{"alpha":true}',1750000034.0);
INSERT INTO "ballots" VALUES('r-bob','p-bob-two','émilie','{"alpha":true}',1750000035.0);
CREATE TABLE forwards (
    reg_id text NOT NULL,
    prompt_id text NOT NULL,
    message_id text NOT NULL,
    payload text NOT NULL,
    responders text NOT NULL,
    state text NOT NULL,
    detail text,
    at double precision NOT NULL, owner text NOT NULL DEFAULT '',
    PRIMARY KEY (reg_id, prompt_id)
);
INSERT INTO "forwards" VALUES('r-team','p-doubt','m-p-doubt','{"alpha":true}','["bob"]','forwarding',NULL,1750000040.0,'');
INSERT INTO "forwards" VALUES('r-team','p-doubt-dead','m-p-doubt-dead','{"alpha":true}','["bob"]','forwarding',NULL,1750000041.0,'replica-dead');
INSERT INTO "forwards" VALUES('r-team','p-doubt-alive','m-p-doubt-alive','{"alpha":true}','["alice"]','forwarding',NULL,1750000042.0,'replica-alive');
INSERT INTO "forwards" VALUES('r-team','p-forwarded','m-p-forwarded','{"alpha":true}','["alice"]','forwarded','accepted',1750000046.0,'replica-alive');
INSERT INTO "forwards" VALUES('r-team','p-failed','m-p-failed','{"alpha":true}','["alice"]','failed','the agent could not be reached',1750000047.0,'replica-dead');
INSERT INTO "forwards" VALUES('r-bob','p-bob-two','m-bob-two','{"alpha":true}','["bob", "\u00e9milie"]','forwarded','accepted',1750000050.0,'replica-alive');
CREATE TABLE leases (
    reg_id text PRIMARY KEY,
    holder text NOT NULL,
    expires double precision NOT NULL
);
INSERT INTO "leases" VALUES('r-bob','replica-dead',1.79666447722801470758e+09);
INSERT INTO "leases" VALUES('r-quote','replica-dead',1.79666447722801470758e+09);
INSERT INTO "leases" VALUES('r-team','replica-alive',1.17966644172319984438e+10);
INSERT INTO "leases" VALUES('r-server','replica-alive',1.17966644172319984438e+10);
CREATE TABLE notify_mailboxes (
    recipient text PRIMARY KEY,
    last_sent double precision,
    next_at double precision,
    claim text,
    claim_until double precision
);
CREATE TABLE notify_notes (
    seq integer PRIMARY KEY AUTOINCREMENT,
    key text NOT NULL UNIQUE,
    recipient text NOT NULL,
    kind text NOT NULL,
    reg_id text NOT NULL,
    prompt_id text NOT NULL,
    facts text NOT NULL,
    answers integer NOT NULL DEFAULT 0,
    created double precision NOT NULL,
    due double precision NOT NULL,
    expires double precision,
    not_before double precision NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    state text NOT NULL DEFAULT 'pending',
    claim text,
    done_at double precision
);
CREATE TABLE notify_prefs (
    name text PRIMARY KEY,
    off integer NOT NULL DEFAULT 0,
    webhook text,
    updated double precision NOT NULL
);
CREATE TABLE prompts (
    reg_id text NOT NULL REFERENCES registrations(id),
    prompt_id text NOT NULL,
    context_id text,
    envelope text NOT NULL,
    deadline double precision,
    first_seen double precision NOT NULL,
    closed text, needed integer NOT NULL DEFAULT 1, named integer NOT NULL DEFAULT 0,
    PRIMARY KEY (reg_id, prompt_id)
);
INSERT INTO "prompts" VALUES('r-team','p-default','c-team','{"prompt_id": "p-default", "prompt": "p-default: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000006.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-any','c-team','{"prompt_id": "p-any", "prompt": "p-any: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["any"], "deadline": "2100-01-01T00:00:00Z"}',4102444800.0,1750000007.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-bob','c-team','{"prompt_id": "p-bob", "prompt": "p-bob: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:bob"], "deadline": "2099-12-31T23:59:50Z"}',4102444790.0,1750000008.0,NULL,1,1);
INSERT INTO "prompts" VALUES('r-team','p-pair','c-team','{"prompt_id": "p-pair", "prompt": "p-pair: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:carol", "specific:bob"]}',NULL,1750000009.0,NULL,1,1);
INSERT INTO "prompts" VALUES('r-team','p-odd','c-team','{"prompt_id": "p-odd", "prompt": "p-odd: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:o''brien", "specific:a,b", "specific:\u00e9milie", "specific:{x}", "specific:\"q\"", "specific:back\\slash", "specific:two words"]}',NULL,1750000010.0,NULL,1,1);
INSERT INTO "prompts" VALUES('r-team','p-two','c-team','{"prompt_id": "p-two", "prompt": "p-two: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2"]}',NULL,1750000011.0,NULL,2,0);
INSERT INTO "prompts" VALUES('r-team','p-three','c-team','{"prompt_id": "p-three", "prompt": "p-three: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:3"], "deadline": "2025-06-16T15:06:40Z"}',1750086400.0,1750000012.0,NULL,3,0);
INSERT INTO "prompts" VALUES('r-team','p-two-named','c-team','{"prompt_id": "p-two-named", "prompt": "p-two-named: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2", "specific:alice", "specific:dave"]}',NULL,1750000013.0,NULL,2,1);
INSERT INTO "prompts" VALUES('r-team','p-unknown','c-team','{"prompt_id": "p-unknown", "prompt": "p-unknown: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["role:reviewers"]}',NULL,1750000014.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-expired','c-team','{"prompt_id": "p-expired", "prompt": "p-expired: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["any"], "deadline": "2025-06-15T14:06:40Z"}',1749996400.0,1750000015.0,'expired',1,0);
INSERT INTO "prompts" VALUES('r-team','p-due','c-team','{"prompt_id": "p-due", "prompt": "p-due: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2025-06-15T16:06:40Z"}',1750003600.0,1750000016.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-doubt','c-team','{"prompt_id": "p-doubt", "prompt": "p-doubt: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000017.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-doubt-dead','c-team','{"prompt_id": "p-doubt-dead", "prompt": "p-doubt-dead: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:bob"]}',NULL,1750000018.0,NULL,1,1);
INSERT INTO "prompts" VALUES('r-team','p-doubt-alive','c-team','{"prompt_id": "p-doubt-alive", "prompt": "p-doubt-alive: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000019.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-forwarded','c-team','{"prompt_id": "p-forwarded", "prompt": "p-forwarded: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2100-01-01T00:00:00Z"}',4102444800.0,1750000020.0,'answered',1,0);
INSERT INTO "prompts" VALUES('r-team','p-failed','c-team','{"prompt_id": "p-failed", "prompt": "p-failed: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000021.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-dropped','c-team','{"prompt_id": "p-dropped", "prompt": "p-dropped: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000022.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-team','p-gone','c-team','{"prompt_id": "p-gone", "prompt": "p-gone: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000023.0,'closed by the agent',1,0);
INSERT INTO "prompts" VALUES('r-bob','p-bob-any',NULL,'{"prompt_id": "p-bob-any", "prompt": "p-bob-any: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000024.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-bob','p-bob-two','c-bob','{"prompt_id": "p-bob-two", "prompt": "p-bob-two: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2"]}',NULL,1750000025.0,'answered',2,0);
INSERT INTO "prompts" VALUES('r-server','p-server','c-server','{"prompt_id": "p-server", "prompt": "p-server: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2025-06-15T17:06:40Z"}',1750007200.0,1750000026.0,NULL,1,0);
INSERT INTO "prompts" VALUES('r-quote','p-quote','c-''q''','{"prompt_id": "p-quote", "prompt": "p-quote: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:carol", "any"]}',NULL,1750000027.0,NULL,1,1);
INSERT INTO "prompts" VALUES('r-ended','p-ended','c-ended','{"prompt_id": "p-ended", "prompt": "p-ended: approve? \u00c7a va \ud83d\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}',NULL,1750000028.0,'closed by the agent',1,0);
CREATE TABLE push (
    reg_id text PRIMARY KEY,
    secret text NOT NULL,
    configured double precision,
    received bigint NOT NULL DEFAULT 0
);
INSERT INTO "push" VALUES('r-team','secret-team-0123456789',1750000055.0,3);
INSERT INTO "push" VALUES('r-bob','secret-bob-0123456789',NULL,0);
CREATE TABLE registrations (
    id text PRIMARY KEY,
    agent_url text NOT NULL,
    task_id text NOT NULL,
    registered_by text NOT NULL,
    created double precision NOT NULL, registrant text, ended double precision,
    UNIQUE (agent_url, task_id)
);
INSERT INTO "registrations" VALUES('r-team','http://agent.example:8000/a2a','t-team','Alice Liddell',1750000001.0,'alice',NULL);
INSERT INTO "registrations" VALUES('r-bob','http://agent.example:8000/a2a','t-bob','Bob',1750000002.0,'bob',NULL);
INSERT INTO "registrations" VALUES('r-server','http://other.example/','t-server','anonymous',1750000003.0,NULL,NULL);
INSERT INTO "registrations" VALUES('r-quote','http://agent.example:8000/a2a','t-''quoted'' "task" é','Carol',1750000004.0,'carol',NULL);
INSERT INTO "registrations" VALUES('r-ended','http://other.example/','t-ended','Carol',1750000005.0,'carol',1750000029.0);
CREATE TABLE replicas (
    id text PRIMARY KEY,
    started double precision NOT NULL,
    expires double precision NOT NULL
);
INSERT INTO "replicas" VALUES('replica-dead',1.79666441722000837328e+09,1.79666447722801470758e+09);
INSERT INTO "replicas" VALUES('replica-alive',1.79666441722399139405e+09,1.17966644172319984438e+10);
CREATE INDEX audit_by_registration ON audit (reg_id, id)
;
CREATE INDEX leases_by_holder ON leases (holder);
CREATE INDEX forwards_unsettled ON forwards (owner) WHERE state = 'forwarding';
CREATE INDEX prompts_open
    ON prompts ((deadline IS NULL), deadline, first_seen, prompt_id) WHERE closed IS NULL
;
CREATE INDEX notify_notes_due ON notify_notes (not_before) WHERE state = 'pending';
CREATE INDEX notify_notes_recipient ON notify_notes (recipient) WHERE state = 'pending';
CREATE INDEX notify_notes_claim ON notify_notes (claim) WHERE claim IS NOT NULL;
CREATE INDEX notify_notes_prompt ON notify_notes (reg_id, prompt_id);
CREATE INDEX notify_notes_done ON notify_notes (done_at) WHERE done_at IS NOT NULL;
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('audit',10);
COMMIT;
PRAGMA user_version = 5;
