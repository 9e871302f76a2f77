ALTER TABLE `instances` ADD `reports_minute` integer;--> statement-breakpoint
ALTER TABLE `instances` ADD `reports_in_minute` integer DEFAULT 0 NOT NULL;