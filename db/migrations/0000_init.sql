CREATE TABLE `agents` (
	`id` text PRIMARY KEY NOT NULL,
	`run_counter` integer DEFAULT 0 NOT NULL,
	`session_epoch` integer DEFAULT 1 NOT NULL,
	`run_slot` integer DEFAULT 0 NOT NULL,
	`next_run_at` integer,
	`lease_run_id` integer,
	`lease_token` text,
	`lease_expires_at` integer,
	`context_tokens` integer DEFAULT 0 NOT NULL,
	`last_reconciled_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`agent_id` text NOT NULL,
	`epoch` integer NOT NULL,
	`summary` text DEFAULT '' NOT NULL,
	`summary_tokens` integer DEFAULT 0 NOT NULL,
	`summarized_through` integer DEFAULT 0 NOT NULL,
	`started_at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `epoch`)
);
--> statement-breakpoint
CREATE TABLE `events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`source` text NOT NULL,
	`priority` integer NOT NULL,
	`dedup_key` text NOT NULL,
	`payload` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`drop_reason` text,
	`run_id` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`consumed_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_dedup` ON `events` (`agent_id`,`dedup_key`);--> statement-breakpoint
CREATE INDEX `events_status` ON `events` (`agent_id`,`status`);--> statement-breakpoint
CREATE INDEX `events_run` ON `events` (`agent_id`,`run_id`);--> statement-breakpoint
CREATE TABLE `runs` (
	`agent_id` text NOT NULL,
	`run_id` integer NOT NULL,
	`status` text NOT NULL,
	`noop` integer,
	`decider` text,
	`session_epoch` integer NOT NULL,
	`prompt_tokens` integer DEFAULT 0 NOT NULL,
	`completion_tokens` integer DEFAULT 0 NOT NULL,
	`context_tokens` integer DEFAULT 0 NOT NULL,
	`compaction` text,
	`triggers` text DEFAULT '[]' NOT NULL,
	`wakes_consumed` text DEFAULT '[]' NOT NULL,
	`reply` text,
	`error` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	PRIMARY KEY(`agent_id`, `run_id`)
);
--> statement-breakpoint
CREATE TABLE `wakes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`due_at` integer NOT NULL,
	`reason` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`created_by_run` integer,
	`consumed_by_run` integer,
	`created_at` integer NOT NULL,
	`consumed_at` integer
);
--> statement-breakpoint
CREATE INDEX `wakes_due` ON `wakes` (`agent_id`,`status`,`due_at`);--> statement-breakpoint
CREATE TABLE `memory` (
	`agent_id` text NOT NULL,
	`key` text NOT NULL,
	`fact` text NOT NULL,
	`tokens` integer NOT NULL,
	`created_by_run` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `messages` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`session_epoch` integer NOT NULL,
	`run_id` integer NOT NULL,
	`role` text NOT NULL,
	`content` text DEFAULT '' NOT NULL,
	`tool_calls` text,
	`tool_call_id` text,
	`tokens` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `messages_epoch` ON `messages` (`agent_id`,`session_epoch`,`id`);--> statement-breakpoint
CREATE TABLE `actions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`run_id` integer,
	`instance_id` text,
	`kind` text NOT NULL,
	`decided_by` text NOT NULL,
	`idempotency_key` text NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`result` text,
	`error` text,
	`approval_id` integer,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `actions_idempotency` ON `actions` (`agent_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `actions_instance` ON `actions` (`agent_id`,`instance_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `approvals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`run_id` integer,
	`kind` text NOT NULL,
	`instance_id` text,
	`reason` text NOT NULL,
	`requested_by` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`decided_at` integer,
	`note` text,
	`action_id` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `approvals_status` ON `approvals` (`agent_id`,`status`);--> statement-breakpoint
CREATE TABLE `instance_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`from_state` text,
	`to_state` text NOT NULL,
	`source` text NOT NULL,
	`message` text,
	`at` integer NOT NULL,
	`event_id` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `instance_events_instance` ON `instance_events` (`agent_id`,`instance_id`,`id`);--> statement-breakpoint
CREATE TABLE `instances` (
	`agent_id` text NOT NULL,
	`id` text NOT NULL,
	`state` text NOT NULL,
	`state_at` integer NOT NULL,
	`label` text,
	`gpu_name` text,
	`gpu_count` integer,
	`price_per_hour` real,
	`status_message` text,
	`started_at` integer,
	`last_seen_at` integer NOT NULL,
	`heartbeat_s` integer,
	`reports_by_webhook` integer DEFAULT false NOT NULL,
	`heartbeat_flagged_at` integer,
	`gone_at` integer,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `id`)
);
--> statement-breakpoint
CREATE TABLE `simulator_instances` (
	`id` text PRIMARY KEY NOT NULL,
	`state` text NOT NULL,
	`label` text,
	`gpu_name` text NOT NULL,
	`gpu_count` integer NOT NULL,
	`price_per_hour` real NOT NULL,
	`status_message` text,
	`started_at` integer,
	`failure` text,
	`failures_rolled_at` integer,
	`destroyed` integer DEFAULT false NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `notification_deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`notification_id` integer NOT NULL,
	`channel` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE INDEX `notification_deliveries_notification` ON `notification_deliveries` (`notification_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`run_id` integer,
	`title` text NOT NULL,
	`body` text NOT NULL,
	`severity` text NOT NULL,
	`dedup_key` text NOT NULL,
	`repeats` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `notifications_dedup` ON `notifications` (`agent_id`,`dedup_key`,`created_at`);--> statement-breakpoint
CREATE TABLE `accepted_signatures` (
	`jti` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `breakers` (
	`name` text PRIMARY KEY NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`open_until` integer,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `deliveries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`dedup_key` text NOT NULL,
	`body` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`due_at` integer NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`claimed_at` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`delivered_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_dedupKey_unique` ON `deliveries` (`dedup_key`);--> statement-breakpoint
CREATE INDEX `deliveries_due` ON `deliveries` (`status`,`due_at`);