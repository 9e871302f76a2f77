CREATE TABLE `provider_balances` (
	`agent_id` text PRIMARY KEY NOT NULL,
	`usd` real,
	`at` integer,
	`attempt_at` integer NOT NULL,
	`error` text
);
--> statement-breakpoint
CREATE TABLE `leases` (
	`agent_id` text NOT NULL,
	`instance_id` text NOT NULL,
	`owner` text NOT NULL,
	`client` text,
	`purpose` text NOT NULL,
	`ends_at` integer NOT NULL,
	`ended_at` integer,
	`end_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`agent_id`, `instance_id`)
);
--> statement-breakpoint
CREATE INDEX `leases_open` ON `leases` (`ends_at`) WHERE ended_at is null;--> statement-breakpoint
CREATE INDEX `leases_owner` ON `leases` (`owner`,`agent_id`);--> statement-breakpoint
ALTER TABLE `instances` ADD `progress` real;--> statement-breakpoint
ALTER TABLE `instances` ADD `progress_at` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `progress_moved_at` integer;--> statement-breakpoint
ALTER TABLE `replacements` ADD `account` text;--> statement-breakpoint
CREATE UNIQUE INDEX `replacements_account_open` ON `replacements` (`account`,`old_instance_id`) WHERE account is not null and status not in ('done', 'failed', 'rejected', 'expired', 'cancelled');--> statement-breakpoint
ALTER TABLE `instance_telemetry` ADD `progress` real;