CREATE TABLE `replacements` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`old_instance_id` text NOT NULL,
	`status` text NOT NULL,
	`reason` text NOT NULL,
	`decided_by` text NOT NULL,
	`run_id` integer,
	`approval_id` integer,
	`spec` text,
	`basis` text,
	`offer` text,
	`marker` text NOT NULL,
	`create_attempted_at` integer,
	`new_instance_id` text,
	`deadline_at` integer,
	`error` text,
	`operator` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `replacements_agent` ON `replacements` (`agent_id`,`status`);--> statement-breakpoint
CREATE UNIQUE INDEX `replacements_open` ON `replacements` (`agent_id`,`old_instance_id`) WHERE status not in ('done', 'failed', 'rejected', 'expired', 'cancelled');--> statement-breakpoint
ALTER TABLE `agents` ADD `webhook_secret` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `webhook_secret_previous` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `webhook_secret_previous_until` integer;--> statement-breakpoint
ALTER TABLE `sessions` ADD `started_by` text;--> statement-breakpoint
ALTER TABLE `runs` ADD `output_cut` integer DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX `runs_started` ON `runs` (`agent_id`,`started_at`);--> statement-breakpoint
ALTER TABLE `messages` ADD `operator` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `requested_by_operator` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `context` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `expires_at` integer;--> statement-breakpoint
ALTER TABLE `approvals` ADD `reminded_at` integer;--> statement-breakpoint
CREATE INDEX `approvals_recent` ON `approvals` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `approvals_pending_expiry` ON `approvals` (`expires_at`) WHERE status = 'pending';--> statement-breakpoint
ALTER TABLE `instances` ADD `stop_reason` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `machine_id` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `replaces` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `replaced_by` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `webhook_only` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `notification_deliveries` ADD `last_status` integer;--> statement-breakpoint
ALTER TABLE `notifications` ADD `approval_id` integer;--> statement-breakpoint
ALTER TABLE `operators` ADD `slack_user_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `operators_slackUserId_unique` ON `operators` (`slack_user_id`);--> statement-breakpoint
CREATE INDEX `events_recent` ON `events` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_consumed` ON `events` (`created_at`) WHERE status = 'consumed';--> statement-breakpoint
CREATE INDEX `wakes_by_run` ON `wakes` (`agent_id`,`created_by_run`);--> statement-breakpoint
CREATE INDEX `actions_recent` ON `actions` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `instance_events_created` ON `instance_events` (`created_at`);--> statement-breakpoint
CREATE INDEX `replays_created` ON `replays` (`created_at`);