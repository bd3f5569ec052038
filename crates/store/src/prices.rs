//! Model prices (ratios). Typing and pricing rules live in `switchboard_domain::price`.

use crate::schema::prices;
use crate::{now, DbConn, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = prices)]
pub struct PriceRow {
    pub id: i64,
    pub model: String,
    pub price_type: String,
    pub channel_type: i32,
    pub input: f64,
    pub output: f64,
    pub extra_ratios: String,
    pub locked: bool,
    pub created_at: i64,
    pub updated_at: i64,
    pub max_output_tokens: i64,
}

#[derive(Debug, Clone, Insertable, AsChangeset)]
#[diesel(table_name = prices)]
pub struct PriceFields {
    pub model: String,
    pub price_type: String,
    pub channel_type: i32,
    pub input: f64,
    pub output: f64,
    pub extra_ratios: String,
    pub locked: bool,
    pub updated_at: i64,
    pub max_output_tokens: i64,
}

pub fn all(conn: &mut DbConn) -> StoreResult<Vec<PriceRow>> {
    Ok(prices::table
        .order(prices::model.asc())
        .select(PriceRow::as_select())
        .load(conn)?)
}

/// Inserts the rows whose model has no price yet (the built-in list on first start); existing
/// rows are never touched. Returns how many were added.
pub fn seed_missing(conn: &mut DbConn, rows: &[PriceFields]) -> StoreResult<usize> {
    crate::transaction(conn, |c| {
        let existing: Vec<String> = prices::table.select(prices::model).load(c)?;
        let t = now();
        let mut n = 0;
        for r in rows.iter().filter(|r| !existing.contains(&r.model)) {
            diesel::insert_into(prices::table)
                .values((r, prices::created_at.eq(t)))
                .execute(c)?;
            n += 1;
        }
        Ok(n)
    })
}

/// Creates or replaces the price of one model.
pub fn upsert(conn: &mut DbConn, f: &PriceFields) -> StoreResult<()> {
    crate::transaction(conn, |c| {
        let n = diesel::update(prices::table.filter(prices::model.eq(&f.model)))
            .set(f)
            .execute(c)?;
        if n == 0 {
            diesel::insert_into(prices::table)
                .values((f, prices::created_at.eq(now())))
                .execute(c)?;
        }
        Ok(())
    })
}

pub fn find(conn: &mut DbConn, model: &str) -> StoreResult<PriceRow> {
    Ok(prices::table
        .filter(prices::model.eq(model))
        .select(PriceRow::as_select())
        .first(conn)?)
}

/// Creates a price; a model that already has one is a conflict.
pub fn insert(conn: &mut DbConn, f: &PriceFields) -> StoreResult<()> {
    diesel::insert_into(prices::table)
        .values((f, prices::created_at.eq(now())))
        .execute(conn)?;
    Ok(())
}

/// Replaces the price of `model` (which may be renamed to `f.model`).
pub fn update(conn: &mut DbConn, model: &str, f: &PriceFields) -> StoreResult<()> {
    let n = diesel::update(prices::table.filter(prices::model.eq(model)))
        .set(f)
        .execute(conn)?;
    if n == 0 {
        return Err(crate::StoreError::NotFound);
    }
    Ok(())
}

/// Deletes the prices of these models; returns how many existed.
pub fn delete_many(conn: &mut DbConn, models: &[String]) -> StoreResult<usize> {
    Ok(diesel::delete(prices::table.filter(prices::model.eq_any(models))).execute(conn)?)
}

/// How many prices name this owner (model owners in use cannot be deleted).
pub fn count_for_owner(conn: &mut DbConn, channel_type: i32) -> StoreResult<i64> {
    Ok(prices::table
        .filter(prices::channel_type.eq(channel_type))
        .count()
        .get_result(conn)?)
}

impl PriceFields {
    /// The stored form of a (validated) domain price.
    pub fn from_price(p: &switchboard_domain::price::Price) -> PriceFields {
        PriceFields {
            model: p.model.clone(),
            price_type: p.price_type.to_string(),
            channel_type: p.channel_type,
            input: p.input,
            output: p.output,
            extra_ratios: p.extra.to_json(),
            locked: p.locked,
            updated_at: now(),
            max_output_tokens: p.max_output,
        }
    }
}

/// The stored prices as domain prices (rows whose type or ratios no longer parse are left out:
/// they cannot take part in a comparison).
pub fn all_prices(conn: &mut DbConn) -> StoreResult<Vec<switchboard_domain::price::Price>> {
    use switchboard_domain::price::{ExtraRatios, Price};
    Ok(all(conn)?
        .into_iter()
        .filter_map(|r| {
            Some(Price {
                price_type: r.price_type.parse().ok()?,
                extra: ExtraRatios::parse(&r.extra_ratios).ok()?,
                model: r.model,
                channel_type: r.channel_type,
                input: r.input,
                output: r.output,
                locked: r.locked,
                max_output: r.max_output_tokens,
            })
        })
        .collect())
}

/// Applies a price-sync plan in one transaction. Updates and deletes re-check the lock in SQL,
/// so a price locked after the plan was made is still left alone. Returns (inserted, updated,
/// deleted).
pub fn apply_sync(
    conn: &mut DbConn,
    plan: &switchboard_domain::price::SyncPlan,
) -> StoreResult<(usize, usize, usize)> {
    crate::transaction(conn, |c| {
        let t = now();
        let mut inserted = 0;
        for p in &plan.insert {
            let exists: i64 = prices::table
                .filter(prices::model.eq(&p.model))
                .count()
                .get_result(c)?;
            if exists == 0 {
                diesel::insert_into(prices::table)
                    .values((PriceFields::from_price(p), prices::created_at.eq(t)))
                    .execute(c)?;
                inserted += 1;
            }
        }
        let mut updated = 0;
        for p in &plan.update {
            updated += diesel::update(
                prices::table
                    .filter(prices::model.eq(&p.model))
                    .filter(prices::locked.eq(false)),
            )
            .set(PriceFields::from_price(p))
            .execute(c)?;
        }
        let deleted = if plan.delete.is_empty() {
            0
        } else {
            diesel::delete(
                prices::table
                    .filter(prices::model.eq_any(&plan.delete))
                    .filter(prices::locked.eq(false)),
            )
            .execute(c)?
        };
        Ok((inserted, updated, deleted))
    })
}
