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
ALTER TABLE `wakes` ADD `instance_id` text;--> statement-breakpoint
ALTER TABLE `wakes` ADD `await_state` text;--> statement-breakpoint
CREATE INDEX `wakes_created` ON `wakes` (`agent_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `instances` ADD `expected_state` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `expected_until` integer;--> statement-breakpoint
ALTER TABLE `notifications` ADD `instance_id` text;