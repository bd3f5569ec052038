//! The Telegram bot's custom menu (`telegram_menus`) and the users bound to Telegram accounts
//! (`users.telegram_id`, 0 when not bound).

use crate::schema::{telegram_menus, users};
use crate::users::{like_pattern, UserRow};
use crate::{insert_returning_id, now, DbConn, Page, PageReq, StoreError, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = telegram_menus)]
pub struct MenuRow {
    pub id: i64,
    /// Without the leading `/`.
    pub command: String,
    pub description: String,
    /// `""` (plain text), `Markdown`, `MarkdownV2` or `HTML`.
    pub parse_mode: String,
    pub reply_message: String,
}

#[derive(Debug, Clone, Insertable, AsChangeset)]
#[diesel(table_name = telegram_menus)]
pub struct MenuFields<'a> {
    pub command: &'a str,
    pub description: &'a str,
    pub parse_mode: &'a str,
    pub reply_message: &'a str,
}

/// Inserts an entry; [`StoreError::Conflict`] when its command is taken.
pub fn insert_menu(conn: &mut DbConn, f: &MenuFields<'_>) -> StoreResult<i64> {
    insert_returning_id!(conn, telegram_menus::table, f, telegram_menus::id)
}

/// Replaces an entry; [`StoreError::NotFound`] when there is none, `Conflict` when its new
/// command is another entry's.
pub fn update_menu(conn: &mut DbConn, id: i64, f: &MenuFields<'_>) -> StoreResult<()> {
    let n = diesel::update(telegram_menus::table.find(id))
        .set(f)
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn delete_menu(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(telegram_menus::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}

pub fn find_menu(conn: &mut DbConn, id: i64) -> StoreResult<MenuRow> {
    Ok(telegram_menus::table
        .find(id)
        .select(MenuRow::as_select())
        .first(conn)?)
}

pub fn find_menu_by_command(conn: &mut DbConn, command: &str) -> StoreResult<MenuRow> {
    Ok(telegram_menus::table
        .filter(telegram_menus::command.eq(command))
        .select(MenuRow::as_select())
        .first(conn)?)
}

/// Entries whose command or description contains `keyword` (case-insensitive), by command.
pub fn list_menus(
    conn: &mut DbConn,
    keyword: Option<&str>,
    page: PageReq,
) -> StoreResult<Page<MenuRow>> {
    let build = || {
        let mut q = telegram_menus::table.into_boxed();
        if let Some(k) = keyword.filter(|k| !k.trim().is_empty()) {
            let p = like_pattern(k.trim());
            q = q.filter(
                crate::users::lower(telegram_menus::command)
                    .like(p.clone())
                    .escape('\\')
                    .or(crate::users::lower(telegram_menus::description)
                        .like(p)
                        .escape('\\')),
            );
        }
        q
    };
    let total: i64 = build().count().get_result(conn)?;
    let items = build()
        .order((telegram_menus::command.asc(), telegram_menus::id.asc()))
        .limit(page.size)
        .offset(page.offset())
        .select(MenuRow::as_select())
        .load(conn)?;
    Ok(Page { items, total })
}

/// Every entry, by command (the bot's command list holds at most 100).
pub fn all_menus(conn: &mut DbConn) -> StoreResult<Vec<MenuRow>> {
    Ok(telegram_menus::table
        .order(telegram_menus::command.asc())
        .limit(1000)
        .select(MenuRow::as_select())
        .load(conn)?)
}

/// The user bound to the Telegram account `telegram_id`.
pub fn find_user(conn: &mut DbConn, telegram_id: i64) -> StoreResult<UserRow> {
    if telegram_id == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(users::table
        .filter(users::telegram_id.eq(telegram_id))
        .select(UserRow::as_select())
        .first(conn)?)
}

/// Binds `user_id` to `telegram_id` (0 unbinds). Binding refuses ([`StoreError::Conflict`])
/// a Telegram account already bound to another user; run it in a transaction.
pub fn set_user(conn: &mut DbConn, user_id: i64, telegram_id: i64) -> StoreResult<()> {
    if telegram_id != 0 {
        let taken: i64 = users::table
            .filter(users::telegram_id.eq(telegram_id))
            .filter(users::id.ne(user_id))
            .count()
            .get_result(conn)?;
        if taken > 0 {
            return Err(StoreError::Conflict(
                "this Telegram account is bound to another user".into(),
            ));
        }
    }
    let n = diesel::update(users::table.find(user_id))
        .set((
            users::telegram_id.eq(telegram_id),
            users::updated_at.eq(now()),
        ))
        .execute(conn)?;
    if n == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(())
}
