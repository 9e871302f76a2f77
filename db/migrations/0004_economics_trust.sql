CREATE TABLE `instance_spend` (
	`agent_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`day` text NOT NULL,
	`usd` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`agent_id`, `day`, `instance_id`)
);
--> statement-breakpoint
CREATE TABLE `instance_telemetry` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`gpu_util` real,
	`disk_used_pct` real,
	`source` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `instance_telemetry_instance` ON `instance_telemetry` (`agent_id`,`instance_id`,`at`);--> statement-breakpoint
CREATE INDEX `instance_telemetry_at` ON `instance_telemetry` (`at`);--> statement-breakpoint
CREATE TABLE `once_notices` (
	`agent_id` text NOT NULL,
	`key` text NOT NULL,
	`notification_id` integer,
	`at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `key`)
);
--> statement-breakpoint
CREATE TABLE `llm_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`run_id` integer NOT NULL,
	`seq` integer NOT NULL,
	`purpose` text NOT NULL,
	`model` text NOT NULL,
	`request` text NOT NULL,
	`response` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `llm_calls_run` ON `llm_calls` (`agent_id`,`run_id`,`seq`);--> statement-breakpoint
CREATE INDEX `llm_calls_created` ON `llm_calls` (`created_at`);--> statement-breakpoint
CREATE TABLE `replays` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`agent_id` text NOT NULL,
	`run_id` integer NOT NULL,
	`model` text NOT NULL,
	`operator` text NOT NULL,
	`result` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `replays_run` ON `replays` (`agent_id`,`run_id`);--> statement-breakpoint
ALTER TABLE `memory` ADD `untrusted` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `actions` ADD `evidence` text;--> statement-breakpoint
ALTER TABLE `actions` ADD `model` text;--> statement-breakpoint
CREATE INDEX `actions_run` ON `actions` (`agent_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `actions_created` ON `actions` (`agent_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `instances` ADD `gpu_util` real;--> statement-breakpoint
ALTER TABLE `instances` ADD `gpu_util_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `disk_used_pct` real;--> statement-breakpoint
ALTER TABLE `instances` ADD `telemetry_source` text;--> statement-breakpoint
ALTER TABLE `instances` ADD `idle_since` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `storage_per_hour` real;--> statement-breakpoint
ALTER TABLE `instances` ADD `spend_accrued_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `ends_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `interruptible` integer;--> statement-breakpoint
CREATE INDEX `notifications_run` ON `notifications` (`agent_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `notifications_created` ON `notifications` (`agent_id`,`created_at`);