CREATE TABLE `scheduler_health` (
	`kind` text PRIMARY KEY NOT NULL,
	`failing_since` integer,
	`last_error` text,
	`last_failure_at` integer,
	`last_success_at` integer
);
