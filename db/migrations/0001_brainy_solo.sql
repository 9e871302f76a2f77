CREATE TABLE `action_blocks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`kind` text NOT NULL,
	`approval_id` integer NOT NULL,
	`rejected_by` text NOT NULL,
	`note` text,
	`rejected_at` integer NOT NULL,
	`until` integer NOT NULL,
	`lifted_at` integer,
	`lifted_by` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `action_blocks_approval` ON `action_blocks` (`agent_id`,`approval_id`);--> statement-breakpoint
CREATE INDEX `action_blocks_subject` ON `action_blocks` (`agent_id`,`instance_id`,`kind`);--> statement-breakpoint
CREATE TABLE `health_probe` (
	`id` integer PRIMARY KEY NOT NULL,
	`checked_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `node_hosts` (
	`host_id` text PRIMARY KEY NOT NULL,
	`pid` integer NOT NULL,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `auth_failures` (
	`scope` text PRIMARY KEY NOT NULL,
	`window_start` integer NOT NULL,
	`failures` integer NOT NULL,
	`locked_until` integer
);
--> statement-breakpoint
CREATE TABLE `operator_activity` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`operator_id` integer NOT NULL,
	`operator_name` text NOT NULL,
	`action` text NOT NULL,
	`agent_id` text,
	`subject` text,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `operator_activity_at` ON `operator_activity` (`at`);--> statement-breakpoint
CREATE TABLE `operator_sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`operator_id` integer NOT NULL,
	`csrf_token` text NOT NULL,
	`credential_hash` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`last_seen_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE INDEX `operator_sessions_operator` ON `operator_sessions` (`operator_id`);--> statement-breakpoint
CREATE TABLE `operators` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`role` text NOT NULL,
	`token_hash` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `operators_name_unique` ON `operators` (`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `operators_tokenHash_unique` ON `operators` (`token_hash`);--> statement-breakpoint
CREATE TABLE `sign_in_tokens` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `watchdog_conditions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`kind` text NOT NULL,
	`since` integer NOT NULL,
	`detail` text NOT NULL,
	`start_notified_at` integer,
	`cleared_at` integer,
	`clear_notified_at` integer
);
--> statement-breakpoint
CREATE INDEX `watchdog_conditions_agent` ON `watchdog_conditions` (`agent_id`,`kind`,`cleared_at`);--> statement-breakpoint
ALTER TABLE `agents` ADD `lease_host` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `name` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `settings` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `archived_at` integer;--> statement-breakpoint
ALTER TABLE `wakes` ADD `drop_reason` text;--> statement-breakpoint
ALTER TABLE `wakes` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `wakes` ADD `instance_id` text;--> statement-breakpoint
ALTER TABLE `wakes` ADD `await_state` text;--> statement-breakpoint
CREATE INDEX `wakes_consumed` ON `wakes` (`agent_id`,`consumed_by_run`);--> statement-breakpoint
CREATE INDEX `wakes_recent` ON `wakes` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `wakes_created` ON `wakes` (`agent_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `actions` ADD `operator` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `decided_by` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `expected_state` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `expected_until` integer;--> statement-breakpoint
ALTER TABLE `notifications` ADD `instance_id` text;--> statement-breakpoint
CREATE INDEX `notifications_recent` ON `notifications` (`agent_id`,`id`);--> statement-breakpoint
ALTER TABLE `breakers` ADD `misconfigured` text;--> statement-breakpoint
CREATE INDEX `events_dropped` ON `events` (`created_at`) WHERE status = 'dropped';--> statement-breakpoint
CREATE INDEX `instance_events_event` ON `instance_events` (`agent_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `deliveries_finished` ON `deliveries` (`created_at`) WHERE status in ('delivered', 'failed');