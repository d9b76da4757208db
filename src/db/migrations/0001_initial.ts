/**
 * 0001_initial: the whole data model of Team OS.
 *
 * Frozen in time: once released this file never changes (a later change is a new migration), and it
 * imports nothing from the application, only `kysely`.
 *
 * - Ids are text holding `gen_random_uuid()`: opaque to clients, and any string a client sends compares
 *   safely (a uuid column would turn a malformed id into an error instead of "not found").
 * - Instants are `timestamptz(3)`: milliseconds, like the API and the keyset cursors, so a row never
 *   sorts after its own cursor.
 * - Column names are snake_case.
 * - Enumerations are `text` with a check constraint.
 * - Deleting a team (or an organization) deletes all its data: every team-owned table, and every child
 *   of one, references its parent `on delete cascade`.
 * - References to people (owner, author, creator, evaluator) are plain foreign keys without cascade,
 *   so the history of removed members stays. Only a person's keys, memberships and acknowledgements
 *   follow the person.
 * - Every list order and filter has a composite index (ending with `id` as the tiebreaker), and every
 *   foreign key that cascades or sets null has an index starting with its column.
 */
import { sql, type Kysely } from 'kysely';

const newId = sql`gen_random_uuid()::text`;
const now = sql`now()`;

export async function up(db: Kysely<any>): Promise<void> {
  // ------------------------------------------------------------------------------------------------
  // People and keys

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('email', 'text', (col) => col.notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('timezone', 'text')
    .addColumn('locale', 'text', (col) => col.notNull().defaultTo('en'))
    .addColumn('system_role', 'text', (col) => col.notNull().defaultTo('USER'))
    .addColumn('password_hash', 'text')
    .addColumn('external_only', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('users_locale_check', sql`locale in ('en', 'sk')`)
    .addCheckConstraint('users_system_role_check', sql`system_role in ('USER', 'SUPERADMIN')`)
    .execute();
  await db.schema.createIndex('users_email_lower_key').unique().on('users').expression(sql`lower(email)`).execute();
  await db.schema.createIndex('users_created_at_id_idx').on('users').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('key_hash', 'text', (col) => col.notNull())
    .addColumn('scopes', sql`text[]`, (col) => col.notNull())
    .addColumn('expires_at', 'timestamptz(3)', (col) => col.notNull())
    .addColumn('revoked_at', 'timestamptz(3)')
    .addColumn('last_used_at', 'timestamptz(3)')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('api_keys_key_hash_key', ['key_hash'])
    .addCheckConstraint(
      'api_keys_scopes_check',
      sql`cardinality(scopes) > 0 and array_ndims(scopes) = 1 and scopes <@ array['read', 'write', 'platform']::text[]`,
    )
    .execute();
  await db.schema
    .createIndex('api_keys_user_id_created_at_id_idx')
    .on('api_keys')
    .columns(['user_id', 'created_at desc', 'id desc'])
    .execute();

  // ------------------------------------------------------------------------------------------------
  // Organizations and teams

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('ACTIVE'))
    .addColumn('timezone', 'text', (col) => col.notNull())
    .addColumn('default_locale', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('organizations_slug_key', ['slug'])
    .addCheckConstraint('organizations_status_check', sql`status in ('ACTIVE', 'SUSPENDED')`)
    .addCheckConstraint('organizations_default_locale_check', sql`default_locale in ('en', 'sk')`)
    .execute();
  await db.schema
    .createIndex('organizations_created_at_id_idx')
    .on('organizations')
    .columns(['created_at', 'id'])
    .execute();

  await db.schema
    .createTable('organization_members')
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (col) => col.notNull())
    .addColumn('joined_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('organization_members_pkey', ['org_id', 'user_id'])
    .addCheckConstraint('organization_members_role_check', sql`role in ('OWNER', 'ADMIN', 'MEMBER', 'IMPLEMENTER')`)
    .execute();
  await db.schema
    .createIndex('organization_members_user_id_idx')
    .on('organization_members')
    .column('user_id')
    .execute();
  await db.schema
    .createIndex('organization_members_org_id_joined_at_user_id_idx')
    .on('organization_members')
    .columns(['org_id', 'joined_at', 'user_id'])
    .execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('slug', 'text', (col) => col.notNull())
    .addColumn('is_leadership', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('meeting_duration_min', 'integer', (col) => col.notNull().defaultTo(90))
    .addColumn('meeting_warning_min', 'integer', (col) => col.notNull().defaultTo(80))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('teams_org_id_slug_key', ['org_id', 'slug'])
    .addCheckConstraint('teams_meeting_duration_min_check', sql`meeting_duration_min between 10 and 300`)
    .addCheckConstraint(
      'teams_meeting_warning_min_check',
      sql`meeting_warning_min >= 1 and meeting_warning_min < meeting_duration_min`,
    )
    .execute();
  await db.schema.createIndex('teams_org_id_name_id_idx').on('teams').columns(['org_id', 'name', 'id']).execute();

  await db.schema
    .createTable('team_members')
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('role', 'text', (col) => col.notNull())
    .addColumn('joined_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('team_members_pkey', ['team_id', 'user_id'])
    .addCheckConstraint('team_members_role_check', sql`role in ('OWNER', 'ADMIN', 'MEMBER', 'VIEWER')`)
    .execute();
  await db.schema.createIndex('team_members_user_id_idx').on('team_members').column('user_id').execute();
  await db.schema
    .createIndex('team_members_team_id_joined_at_user_id_idx')
    .on('team_members')
    .columns(['team_id', 'joined_at', 'user_id'])
    .execute();

  // ------------------------------------------------------------------------------------------------
  // Meetings (before tasks and issues, which reference them)

  await db.schema
    .createTable('meetings')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('date', 'date', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('started_at', 'timestamptz(3)')
    .addColumn('ended_at', 'timestamptz(3)')
    .addColumn('duration_min', 'integer')
    .addColumn('created_by_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('notes', 'text')
    .addColumn('ratings_revealed_at', 'timestamptz(3)')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('meetings_status_check', sql`status in ('SCHEDULED', 'IN_PROGRESS', 'COMPLETED')`)
    .execute();
  await db.schema
    .createIndex('meetings_team_id_date_created_at_id_idx')
    .on('meetings')
    .columns(['team_id', 'date desc', 'created_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('meetings_team_id_status_date_created_at_id_idx')
    .on('meetings')
    .columns(['team_id', 'status', 'date desc', 'created_at desc', 'id desc'])
    .execute();
  await db.schema
    .createIndex('meetings_team_id_started_at_idx')
    .on('meetings')
    .columns(['team_id', 'started_at'])
    .execute();

  await db.schema
    .createTable('meeting_ratings')
    .addColumn('meeting_id', 'text', (col) => col.notNull().references('meetings.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('rating', 'integer', (col) => col.notNull())
    .addColumn('absent', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('meeting_ratings_pkey', ['meeting_id', 'user_id'])
    .addCheckConstraint('meeting_ratings_rating_check', sql`rating between 0 and 10`)
    .addCheckConstraint('meeting_ratings_absent_check', sql`absent = false or rating = 0`)
    .execute();

  await db.schema
    .createTable('segues')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('meeting_id', 'text', (col) => col.notNull().references('meetings.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('content', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('segues_meeting_id_created_at_id_idx')
    .on('segues')
    .columns(['meeting_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('headlines')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('meeting_id', 'text', (col) => col.notNull().references('meetings.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('content', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('headlines_type_check', sql`type in ('CUSTOMER', 'EMPLOYEE')`)
    .execute();
  await db.schema
    .createIndex('headlines_meeting_id_created_at_id_idx')
    .on('headlines')
    .columns(['meeting_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('cascading_messages')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('meeting_id', 'text', (col) => col.notNull().references('meetings.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('content', 'text', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('cascading_messages_meeting_id_created_at_id_idx')
    .on('cascading_messages')
    .columns(['meeting_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('cascading_messages_org_id_idx')
    .on('cascading_messages')
    .column('org_id')
    .execute();

  await db.schema
    .createTable('message_acknowledgements')
    .addColumn('message_id', 'text', (col) =>
      col.notNull().references('cascading_messages.id').onDelete('cascade'),
    )
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id').onDelete('cascade'))
    .addColumn('acknowledged_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('message_acknowledgements_pkey', ['message_id', 'user_id'])
    .execute();
  await db.schema
    .createIndex('message_acknowledgements_user_id_idx')
    .on('message_acknowledgements')
    .column('user_id')
    .execute();

  // ------------------------------------------------------------------------------------------------
  // Execution: tasks, issues, goals and milestones

  await db.schema
    .createTable('tasks')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('owner_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('due_date', 'date', (col) => col.notNull())
    .addColumn('completed', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('completed_at', 'timestamptz(3)')
    .addColumn('meeting_id', 'text', (col) => col.references('meetings.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('tasks_team_id_created_at_id_idx')
    .on('tasks')
    .columns(['team_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_team_id_completed_created_at_id_idx')
    .on('tasks')
    .columns(['team_id', 'completed', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('tasks_team_id_owner_id_created_at_id_idx')
    .on('tasks')
    .columns(['team_id', 'owner_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('tasks_meeting_id_idx').on('tasks').column('meeting_id').execute();

  await db.schema
    .createTable('issues')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('priority', 'text', (col) => col.notNull().defaultTo('MEDIUM'))
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('OPEN'))
    .addColumn('meeting_id', 'text', (col) => col.references('meetings.id').onDelete('set null'))
    .addColumn('created_by_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('resolved_at', 'timestamptz(3)')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('issues_priority_check', sql`priority in ('HIGH', 'MEDIUM', 'LOW')`)
    .addCheckConstraint('issues_status_check', sql`status in ('OPEN', 'SOLVING', 'SOLVED')`)
    .execute();
  await db.schema
    .createIndex('issues_team_id_created_at_id_idx')
    .on('issues')
    .columns(['team_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('issues_team_id_status_created_at_id_idx')
    .on('issues')
    .columns(['team_id', 'status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('issues_team_id_priority_created_at_id_idx')
    .on('issues')
    .columns(['team_id', 'priority', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('issues_meeting_id_idx').on('issues').column('meeting_id').execute();
  await db.schema
    .createIndex('issues_team_id_resolved_at_idx')
    .on('issues')
    .columns(['team_id', 'resolved_at'])
    .execute();

  await db.schema
    .createTable('goals')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('org_id', 'text', (col) => col.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('owner_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('quarter', 'text', (col) => col.notNull())
    .addColumn('level', 'text', (col) => col.notNull().defaultTo('DEPARTMENT'))
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('ON_TRACK'))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('goals_quarter_check', sql`quarter ~ '^[0-9]{4}-Q[1-4]$'`)
    .addCheckConstraint('goals_level_check', sql`level in ('COMPANY', 'DEPARTMENT')`)
    .addCheckConstraint('goals_status_check', sql`status in ('ON_TRACK', 'OFF_TRACK', 'DONE')`)
    .execute();
  await db.schema
    .createIndex('goals_team_id_created_at_id_idx')
    .on('goals')
    .columns(['team_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('goals_team_id_quarter_created_at_id_idx')
    .on('goals')
    .columns(['team_id', 'quarter', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('goals_team_id_status_created_at_id_idx')
    .on('goals')
    .columns(['team_id', 'status', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('goals_team_id_level_created_at_id_idx')
    .on('goals')
    .columns(['team_id', 'level', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('goals_company_org_id_created_at_id_idx')
    .on('goals')
    .columns(['org_id', 'created_at', 'id'])
    .where(sql.ref('level'), '=', 'COMPANY')
    .execute();
  await db.schema
    .createIndex('goals_company_org_id_quarter_created_at_id_idx')
    .on('goals')
    .columns(['org_id', 'quarter', 'created_at', 'id'])
    .where(sql.ref('level'), '=', 'COMPANY')
    .execute();
  // The partial indexes above hold company goals only; the cascade from organizations needs all rows.
  await db.schema.createIndex('goals_org_id_idx').on('goals').column('org_id').execute();

  await db.schema
    .createTable('milestones')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('goal_id', 'text', (col) => col.notNull().references('goals.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('due_date', 'date')
    .addColumn('completed', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('milestones_goal_id_created_at_id_idx')
    .on('milestones')
    .columns(['goal_id', 'created_at', 'id'])
    .execute();

  // ------------------------------------------------------------------------------------------------
  // Scorecard

  await db.schema
    .createTable('metrics')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('goal', 'text', (col) => col.notNull())
    .addColumn('owner_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('unit', 'text')
    .addColumn('description', 'text')
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    // Checked at commit, so that moving a metric can swap two positions.
    .addUniqueConstraint('metrics_team_id_position_key', ['team_id', 'position'], (c) =>
      c.deferrable().initiallyDeferred(),
    )
    .execute();

  await db.schema
    .createTable('metric_values')
    .addColumn('metric_id', 'text', (col) => col.notNull().references('metrics.id').onDelete('cascade'))
    .addColumn('week', 'date', (col) => col.notNull())
    .addColumn('value', 'text', (col) => col.notNull())
    .addColumn('on_track', 'boolean', (col) => col.notNull())
    .addColumn('entered_by_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addPrimaryKeyConstraint('metric_values_pkey', ['metric_id', 'week'])
    .addCheckConstraint('metric_values_week_check', sql`extract(isodow from week) = 1`)
    .execute();

  // ------------------------------------------------------------------------------------------------
  // Vision, org-chart, people reviews, documents

  await db.schema
    .createTable('visions')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('core_values', 'text')
    .addColumn('core_focus', 'text')
    .addColumn('ten_year_target', 'text')
    .addColumn('marketing_strategy', 'text')
    .addColumn('three_year_picture', 'text')
    .addColumn('one_year_plan', 'text')
    .addColumn('quarterly_rocks', 'text')
    .addColumn('issues_list', 'text')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('visions_team_id_key', ['team_id'])
    .execute();

  await db.schema
    .createTable('seats')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('parent_id', 'text', (col) => col.references('seats.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.references('users.id'))
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('responsibilities', 'text')
    .addColumn('position', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .execute();
  await db.schema
    .createIndex('seats_team_id_parent_id_position_idx')
    .on('seats')
    .columns(['team_id', 'parent_id', 'position'])
    .execute();
  // Deleting a seat deletes the seats below it: the cascade looks them up by parent_id.
  await db.schema.createIndex('seats_parent_id_idx').on('seats').column('parent_id').execute();

  await db.schema
    .createTable('people_reviews')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('evaluator_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('quarter', 'text', (col) => col.notNull())
    .addColumn('core_values_scores', 'jsonb', (col) => col.notNull())
    .addColumn('gwc', 'jsonb', (col) => col.notNull())
    .addColumn('notes', 'text')
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('people_reviews_quarter_check', sql`quarter ~ '^[0-9]{4}-Q[1-4]$'`)
    .execute();
  // One index does three jobs: one review per (team, reviewed person, evaluator, quarter) (an upsert
  // infers it from `on conflict (team_id, user_id, evaluator_id, quarter)`: column order does not
  // matter for uniqueness), the list order (quarter desc, user_id, evaluator_id) and the quarter filter.
  await db.schema
    .createIndex('people_reviews_team_id_quarter_user_id_evaluator_id_key')
    .unique()
    .on('people_reviews')
    .columns(['team_id', 'quarter desc', 'user_id', 'evaluator_id'])
    .execute();

  await db.schema
    .createTable('documents')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('team_id', 'text', (col) => col.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('type', 'text', (col) => col.notNull().defaultTo('LINK'))
    .addColumn('created_by_id', 'text', (col) => col.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addCheckConstraint('documents_type_check', sql`type in ('LINK', 'FILE')`)
    .execute();
  await db.schema
    .createIndex('documents_team_id_created_at_id_idx')
    .on('documents')
    .columns(['team_id', 'created_at', 'id'])
    .execute();

  // ------------------------------------------------------------------------------------------------
  // AI settings (platform)

  await db.schema
    .createTable('ai_providers')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('api_key_encrypted', 'text', (col) => col.notNull())
    .addColumn('api_key_last4', 'text', (col) => col.notNull())
    .addColumn('default_model', 'text', (col) => col.notNull())
    .addColumn('is_active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('ai_providers_type_key', ['type'])
    .addCheckConstraint('ai_providers_type_check', sql`type in ('OPENAI', 'ANTHROPIC')`)
    .execute();
  await db.schema
    .createIndex('ai_providers_created_at_id_idx')
    .on('ai_providers')
    .columns(['created_at', 'id'])
    .execute();

  await db.schema
    .createTable('ai_prompts')
    .addColumn('id', 'text', (col) => col.primaryKey().defaultTo(newId))
    .addColumn('input_type', 'text', (col) => col.notNull())
    .addColumn('system_prompt', 'text', (col) => col.notNull())
    .addColumn('provider_id', 'text', (col) => col.references('ai_providers.id').onDelete('set null'))
    .addColumn('model_override', 'text')
    .addColumn('is_active', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addColumn('updated_at', 'timestamptz(3)', (col) => col.notNull().defaultTo(now))
    .addUniqueConstraint('ai_prompts_input_type_key', ['input_type'])
    .addCheckConstraint(
      'ai_prompts_input_type_check',
      sql`input_type in ('TODO_TITLE', 'ISSUE_TITLE', 'ISSUE_DESCRIPTION', 'ROCK_TITLE', 'ROCK_DESCRIPTION', 'MEASURABLE_TITLE', 'HEADLINE', 'CASCADING_MESSAGE', 'VTO_CONTENT')`,
    )
    .execute();
  await db.schema.createIndex('ai_prompts_provider_id_idx').on('ai_prompts').column('provider_id').execute();
}

/** Drops every table in the reverse order of creation (their indexes and constraints go with them). */
export async function down(db: Kysely<any>): Promise<void> {
  const tables = [
    'ai_prompts',
    'ai_providers',
    'documents',
    'people_reviews',
    'seats',
    'visions',
    'metric_values',
    'metrics',
    'milestones',
    'goals',
    'issues',
    'tasks',
    'message_acknowledgements',
    'cascading_messages',
    'headlines',
    'segues',
    'meeting_ratings',
    'meetings',
    'team_members',
    'teams',
    'organization_members',
    'organizations',
    'api_keys',
    'users',
  ];
  for (const table of tables) {
    await db.schema.dropTable(table).execute();
  }
}
