ALTER TABLE `agents` ADD `name` text;--> statement-breakpoint
ALTER TABLE `agents` ADD `settings` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `agents` ADD `archived_at` integer;