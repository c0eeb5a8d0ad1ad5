-- A gateway database of schema version 5, written by hitl-nb's PostgreSQL store
-- (tests/gateway/schema5/make.py), as pg_dump wrote it. Load it with psql.
--
-- PostgreSQL database dump
--

\restrict UpkAj6mcUBBwGgKOYDI8ZisueupyFmqvEo2dOwpId8KCsB7Xcohj6VhrQ0nXfZV

-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: audience; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audience (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    prompt_id text NOT NULL COLLATE pg_catalog."C",
    name text NOT NULL COLLATE pg_catalog."C"
);


--
-- Name: audit; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.audit (
    id bigint NOT NULL,
    at double precision NOT NULL,
    reg_id text NOT NULL COLLATE pg_catalog."C",
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


--
-- Name: audit_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.audit ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.audit_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: ballots; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ballots (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    prompt_id text NOT NULL COLLATE pg_catalog."C",
    responder text NOT NULL COLLATE pg_catalog."C",
    payload text NOT NULL,
    at double precision NOT NULL
);


--
-- Name: forwards; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.forwards (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    prompt_id text NOT NULL COLLATE pg_catalog."C",
    message_id text NOT NULL,
    payload text NOT NULL,
    responders text NOT NULL,
    state text NOT NULL,
    detail text,
    at double precision NOT NULL,
    owner text DEFAULT ''::text NOT NULL
);


--
-- Name: hitl_schema; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.hitl_schema (
    version integer NOT NULL
);


--
-- Name: leases; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.leases (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    holder text NOT NULL,
    expires double precision NOT NULL
);


--
-- Name: notify_mailboxes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notify_mailboxes (
    recipient text NOT NULL COLLATE pg_catalog."C",
    last_sent double precision,
    next_at double precision,
    claim text,
    claim_until double precision
);


--
-- Name: notify_notes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notify_notes (
    seq bigint NOT NULL,
    key text NOT NULL,
    recipient text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL,
    reg_id text NOT NULL COLLATE pg_catalog."C",
    prompt_id text NOT NULL COLLATE pg_catalog."C",
    facts text NOT NULL,
    answers integer DEFAULT 0 NOT NULL,
    created double precision NOT NULL,
    due double precision NOT NULL,
    expires double precision,
    not_before double precision NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    state text DEFAULT 'pending'::text NOT NULL,
    claim text,
    done_at double precision
);


--
-- Name: notify_notes_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.notify_notes ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.notify_notes_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: notify_prefs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notify_prefs (
    name text NOT NULL COLLATE pg_catalog."C",
    off integer DEFAULT 0 NOT NULL,
    webhook text,
    updated double precision NOT NULL
);


--
-- Name: prompts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.prompts (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    prompt_id text NOT NULL COLLATE pg_catalog."C",
    context_id text,
    envelope text NOT NULL,
    deadline double precision,
    first_seen double precision NOT NULL,
    closed text,
    needed integer DEFAULT 1 NOT NULL,
    named integer DEFAULT 0 NOT NULL
);


--
-- Name: push; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.push (
    reg_id text NOT NULL COLLATE pg_catalog."C",
    secret text NOT NULL,
    configured double precision,
    received bigint DEFAULT 0 NOT NULL
);


--
-- Name: registrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.registrations (
    id text NOT NULL COLLATE pg_catalog."C",
    agent_url text NOT NULL,
    task_id text NOT NULL,
    registered_by text NOT NULL,
    created double precision NOT NULL,
    registrant text,
    ended double precision
);


--
-- Name: replicas; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.replicas (
    id text NOT NULL,
    started double precision NOT NULL,
    expires double precision NOT NULL
);


--
-- Data for Name: audience; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audience (reg_id, prompt_id, name) FROM stdin;
r-team	p-bob	bob
r-team	p-pair	bob
r-team	p-pair	carol
r-team	p-odd	"q"
r-team	p-odd	a,b
r-team	p-odd	back\\slash
r-team	p-odd	o'brien
r-team	p-odd	{x}
r-team	p-odd	émilie
r-team	p-two-named	alice
r-team	p-two-named	dave
r-team	p-doubt-dead	bob
r-quote	p-quote	carol
\.


--
-- Data for Name: audit; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.audit (id, at, reg_id, task_id, agent_url, prompt_id, responder, display, action, status, reason, payload_sha256, schema_sha256, responders, agent_reply) FROM stdin;
1	1750001000	r-team	t-team	http://agent.example:8000/a2a	p-two	carol	Carol	held	202	\N	0000000000000000000000000000000000000000000000000000000000000000	5555555555555555555555555555555555555555555555555555555555555555	["carol"]	\N
2	1750001001	r-team	t-team	http://agent.example:8000/a2a	p-bob	eve	Eve	refused	403	'eve' may not answer	\N	5555555555555555555555555555555555555555555555555555555555555555	["eve"]	\N
3	1750001002	r-team	t-team	http://agent.example:8000/a2a	p-forwarded	alice	Alice	forwarded	200	\N	0000000000000000000000000000000000000000000000000000000000000002	5555555555555555555555555555555555555555555555555555555555555555	["alice"]	{"message": "ok"}
4	1750001003	r-team	t-team	http://agent.example:8000/a2a	p-doubt	bob	Bob	forwarding	202	\N	0000000000000000000000000000000000000000000000000000000000000003	5555555555555555555555555555555555555555555555555555555555555555	["bob"]	{"message": "lost"}
5	1750001004	r-team	t-team	http://agent.example:8000/a2a	p-dropped	bob	Bob	rejected	422	\N	0000000000000000000000000000000000000000000000000000000000000004	5555555555555555555555555555555555555555555555555555555555555555	["bob"]	{"message": "no", "validation_errors": [{"path": "/alpha", "message": "required"}]}
6	1750001005	r-team	t-team	http://agent.example:8000/a2a	p-failed	alice	Alice	failed	502	\N	0000000000000000000000000000000000000000000000000000000000000005	5555555555555555555555555555555555555555555555555555555555555555	["alice"]	{"message": "unreachable"}
7	1750001006	r-team	t-team	http://agent.example:8000/a2a	p-gone	carol	Carol	closed	409	\N	0000000000000000000000000000000000000000000000000000000000000006	5555555555555555555555555555555555555555555555555555555555555555	["carol"]	{"message": "closed"}
8	1750001007	r-team	t-team	http://agent.example:8000/a2a	p-doubt	\N	\N	forwarded	200	\N	0000000000000000000000000000000000000000000000000000000000000007	5555555555555555555555555555555555555555555555555555555555555555	[]	{"message": "settled \\u2713"}
9	1750001008	r-bob	t-bob	http://agent.example:8000/a2a	p-bob-two	bob	Bob	forwarded	200	\N	0000000000000000000000000000000000000000000000000000000000000008	5555555555555555555555555555555555555555555555555555555555555555	["bob"]	{"message": "ok"}
10	1750001009	r-server	t-server	http://agent.example:8000/a2a	p-server	\N	anonymous	refused	403	no names	\N	5555555555555555555555555555555555555555555555555555555555555555	[]	\N
\.


--
-- Data for Name: ballots; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.ballots (reg_id, prompt_id, responder, payload, at) FROM stdin;
r-team	p-two	carol	{"alpha":true}	1750000030
r-team	p-three	alice	{"alpha":true}	1750000031
r-team	p-three	bob	{"alpha":false}	1750000032
r-team	p-two-named	dave	{"alpha":true,"zeta":"ok"}	1750000033
r-bob	p-bob-two	bob	{"alpha":true}	1750000034
r-bob	p-bob-two	émilie	{"alpha":true}	1750000035
\.


--
-- Data for Name: forwards; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.forwards (reg_id, prompt_id, message_id, payload, responders, state, detail, at, owner) FROM stdin;
r-team	p-doubt	m-p-doubt	{"alpha":true}	["bob"]	forwarding	\N	1750000040	
r-team	p-doubt-dead	m-p-doubt-dead	{"alpha":true}	["bob"]	forwarding	\N	1750000041	replica-dead
r-team	p-doubt-alive	m-p-doubt-alive	{"alpha":true}	["alice"]	forwarding	\N	1750000042	replica-alive
r-team	p-forwarded	m-p-forwarded	{"alpha":true}	["alice"]	forwarded	accepted	1750000046	replica-alive
r-team	p-failed	m-p-failed	{"alpha":true}	["alice"]	failed	the agent could not be reached	1750000047	replica-dead
r-bob	p-bob-two	m-bob-two	{"alpha":true}	["bob", "\\u00e9milie"]	forwarded	accepted	1750000050	replica-alive
\.


--
-- Data for Name: hitl_schema; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.hitl_schema (version) FROM stdin;
5
\.


--
-- Data for Name: leases; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.leases (reg_id, holder, expires) FROM stdin;
r-bob	replica-dead	1796664483.007044
r-quote	replica-dead	1796664483.007044
r-team	replica-alive	11796664423.010235
r-server	replica-alive	11796664423.010235
\.


--
-- Data for Name: notify_mailboxes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.notify_mailboxes (recipient, last_sent, next_at, claim, claim_until) FROM stdin;
\.


--
-- Data for Name: notify_notes; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.notify_notes (seq, key, recipient, kind, reg_id, prompt_id, facts, answers, created, due, expires, not_before, attempts, last_error, state, claim, done_at) FROM stdin;
\.


--
-- Data for Name: notify_prefs; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.notify_prefs (name, off, webhook, updated) FROM stdin;
\.


--
-- Data for Name: prompts; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.prompts (reg_id, prompt_id, context_id, envelope, deadline, first_seen, closed, needed, named) FROM stdin;
r-team	p-default	c-team	{"prompt_id": "p-default", "prompt": "p-default: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000006	\N	1	0
r-team	p-any	c-team	{"prompt_id": "p-any", "prompt": "p-any: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["any"], "deadline": "2100-01-01T00:00:00Z"}	4102444800	1750000007	\N	1	0
r-team	p-bob	c-team	{"prompt_id": "p-bob", "prompt": "p-bob: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:bob"], "deadline": "2099-12-31T23:59:50Z"}	4102444790	1750000008	\N	1	1
r-team	p-pair	c-team	{"prompt_id": "p-pair", "prompt": "p-pair: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:carol", "specific:bob"]}	\N	1750000009	\N	1	1
r-team	p-odd	c-team	{"prompt_id": "p-odd", "prompt": "p-odd: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:o'brien", "specific:a,b", "specific:\\u00e9milie", "specific:{x}", "specific:\\"q\\"", "specific:back\\\\slash", "specific:two words"]}	\N	1750000010	\N	1	1
r-team	p-two	c-team	{"prompt_id": "p-two", "prompt": "p-two: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2"]}	\N	1750000011	\N	2	0
r-team	p-three	c-team	{"prompt_id": "p-three", "prompt": "p-three: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:3"], "deadline": "2025-06-16T15:06:40Z"}	1750086400	1750000012	\N	3	0
r-team	p-two-named	c-team	{"prompt_id": "p-two-named", "prompt": "p-two-named: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2", "specific:alice", "specific:dave"]}	\N	1750000013	\N	2	1
r-team	p-unknown	c-team	{"prompt_id": "p-unknown", "prompt": "p-unknown: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["role:reviewers"]}	\N	1750000014	\N	1	0
r-team	p-due	c-team	{"prompt_id": "p-due", "prompt": "p-due: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2025-06-15T16:06:40Z"}	1750003600	1750000016	\N	1	0
r-team	p-doubt	c-team	{"prompt_id": "p-doubt", "prompt": "p-doubt: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000017	\N	1	0
r-team	p-doubt-dead	c-team	{"prompt_id": "p-doubt-dead", "prompt": "p-doubt-dead: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:bob"]}	\N	1750000018	\N	1	1
r-team	p-doubt-alive	c-team	{"prompt_id": "p-doubt-alive", "prompt": "p-doubt-alive: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000019	\N	1	0
r-team	p-failed	c-team	{"prompt_id": "p-failed", "prompt": "p-failed: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000021	\N	1	0
r-team	p-dropped	c-team	{"prompt_id": "p-dropped", "prompt": "p-dropped: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000022	\N	1	0
r-bob	p-bob-any	\N	{"prompt_id": "p-bob-any", "prompt": "p-bob-any: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000024	\N	1	0
r-server	p-server	c-server	{"prompt_id": "p-server", "prompt": "p-server: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2025-06-15T17:06:40Z"}	1750007200	1750000026	\N	1	0
r-quote	p-quote	c-'q'	{"prompt_id": "p-quote", "prompt": "p-quote: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["specific:carol", "any"]}	\N	1750000027	\N	1	1
r-bob	p-bob-two	c-bob	{"prompt_id": "p-bob-two", "prompt": "p-bob-two: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["consensus:2"]}	\N	1750000025	answered	2	0
r-team	p-expired	c-team	{"prompt_id": "p-expired", "prompt": "p-expired: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "allowed_responders": ["any"], "deadline": "2025-06-15T14:06:40Z"}	1749996400	1750000015	expired	1	0
r-team	p-gone	c-team	{"prompt_id": "p-gone", "prompt": "p-gone: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000023	closed by the agent	1	0
r-ended	p-ended	c-ended	{"prompt_id": "p-ended", "prompt": "p-ended: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}}	\N	1750000028	closed by the agent	1	0
r-team	p-forwarded	c-team	{"prompt_id": "p-forwarded", "prompt": "p-forwarded: approve? \\u00c7a va \\ud83d\\ude80", "response_schema": {"type": "object", "properties": {"zeta": {"type": "string"}, "alpha": {"type": "boolean"}}, "required": ["alpha"]}, "deadline": "2100-01-01T00:00:00Z"}	4102444800	1750000020	answered	1	0
\.


--
-- Data for Name: push; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.push (reg_id, secret, configured, received) FROM stdin;
r-team	secret-team-0123456789	1750000055	3
r-bob	secret-bob-0123456789	\N	0
\.


--
-- Data for Name: registrations; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.registrations (id, agent_url, task_id, registered_by, created, registrant, ended) FROM stdin;
r-team	http://agent.example:8000/a2a	t-team	Alice Liddell	1750000001	alice	\N
r-bob	http://agent.example:8000/a2a	t-bob	Bob	1750000002	bob	\N
r-server	http://other.example/	t-server	anonymous	1750000003	\N	\N
r-quote	http://agent.example:8000/a2a	t-'quoted' "task" é	Carol	1750000004	carol	\N
r-ended	http://other.example/	t-ended	Carol	1750000005	carol	1750000029
\.


--
-- Data for Name: replicas; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.replicas (id, started, expires) FROM stdin;
replica-dead	1796664422.998562	1796664483.007044
replica-alive	1796664423.004902	11796664423.010235
\.


--
-- Name: audit_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.audit_id_seq', 10, true);


--
-- Name: notify_notes_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.notify_notes_seq_seq', 1, false);


--
-- Name: audience audience_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audience
    ADD CONSTRAINT audience_pkey PRIMARY KEY (reg_id, prompt_id, name);


--
-- Name: audit audit_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.audit
    ADD CONSTRAINT audit_pkey PRIMARY KEY (id);


--
-- Name: ballots ballots_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ballots
    ADD CONSTRAINT ballots_pkey PRIMARY KEY (reg_id, prompt_id, responder);


--
-- Name: forwards forwards_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.forwards
    ADD CONSTRAINT forwards_pkey PRIMARY KEY (reg_id, prompt_id);


--
-- Name: leases leases_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.leases
    ADD CONSTRAINT leases_pkey PRIMARY KEY (reg_id);


--
-- Name: notify_mailboxes notify_mailboxes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notify_mailboxes
    ADD CONSTRAINT notify_mailboxes_pkey PRIMARY KEY (recipient);


--
-- Name: notify_notes notify_notes_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notify_notes
    ADD CONSTRAINT notify_notes_key_key UNIQUE (key);


--
-- Name: notify_notes notify_notes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notify_notes
    ADD CONSTRAINT notify_notes_pkey PRIMARY KEY (seq);


--
-- Name: notify_prefs notify_prefs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notify_prefs
    ADD CONSTRAINT notify_prefs_pkey PRIMARY KEY (name);


--
-- Name: prompts prompts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.prompts
    ADD CONSTRAINT prompts_pkey PRIMARY KEY (reg_id, prompt_id);


--
-- Name: push push_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.push
    ADD CONSTRAINT push_pkey PRIMARY KEY (reg_id);


--
-- Name: registrations registrations_agent_url_task_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.registrations
    ADD CONSTRAINT registrations_agent_url_task_id_key UNIQUE (agent_url, task_id);


--
-- Name: registrations registrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.registrations
    ADD CONSTRAINT registrations_pkey PRIMARY KEY (id);


--
-- Name: replicas replicas_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.replicas
    ADD CONSTRAINT replicas_pkey PRIMARY KEY (id);


--
-- Name: audit_by_registration; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX audit_by_registration ON public.audit USING btree (reg_id, id);


--
-- Name: forwards_unsettled; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX forwards_unsettled ON public.forwards USING btree (owner) WHERE (state = 'forwarding'::text);


--
-- Name: leases_by_holder; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX leases_by_holder ON public.leases USING btree (holder);


--
-- Name: notify_notes_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notify_notes_claim ON public.notify_notes USING btree (claim) WHERE (claim IS NOT NULL);


--
-- Name: notify_notes_done; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notify_notes_done ON public.notify_notes USING btree (done_at) WHERE (done_at IS NOT NULL);


--
-- Name: notify_notes_due; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notify_notes_due ON public.notify_notes USING btree (not_before) WHERE (state = 'pending'::text);


--
-- Name: notify_notes_prompt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notify_notes_prompt ON public.notify_notes USING btree (reg_id, prompt_id);


--
-- Name: notify_notes_recipient; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX notify_notes_recipient ON public.notify_notes USING btree (recipient) WHERE (state = 'pending'::text);


--
-- Name: prompts_open; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX prompts_open ON public.prompts USING btree (((deadline IS NULL)), deadline, first_seen, prompt_id) WHERE (closed IS NULL);


--
-- Name: prompts prompts_reg_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.prompts
    ADD CONSTRAINT prompts_reg_id_fkey FOREIGN KEY (reg_id) REFERENCES public.registrations(id);


--
-- PostgreSQL database dump complete
--

\unrestrict UpkAj6mcUBBwGgKOYDI8ZisueupyFmqvEo2dOwpId8KCsB7Xcohj6VhrQ0nXfZV

