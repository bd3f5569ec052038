//! Model owners (who a model belongs to, shown with an icon). Built-in providers use their
//! channel type id; operator-defined owners use ids from 1000 on.

use crate::schema::model_owners;
use crate::{now, DbConn, StoreResult};
use diesel::prelude::*;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = model_owners)]
pub struct ModelOwnerRow {
    pub id: i64,
    pub name: String,
    pub icon: String,
    pub created_at: i64,
    pub updated_at: i64,
}

pub fn list(conn: &mut DbConn) -> StoreResult<Vec<ModelOwnerRow>> {
    Ok(model_owners::table
        .order(model_owners::id.asc())
        .select(ModelOwnerRow::as_select())
        .load(conn)?)
}

/// The providers every installation starts with, keyed by the one-hub channel type ids (so
/// exported configurations mean the same); xAI, absent there, takes the next free id.
pub const BUILT_IN: &[(i64, &str)] = &[
    (1, "OpenAI"),
    (3, "Azure"),
    (14, "Anthropic"),
    (15, "Baidu"),
    (16, "Zhipu"),
    (17, "Ali"),
    (18, "Xunfei"),
    (19, "360"),
    (20, "OpenRouter"),
    (23, "Tencent"),
    (25, "Google Gemini"),
    (26, "Baichuan"),
    (27, "MiniMax"),
    (28, "DeepSeek"),
    (29, "Moonshot"),
    (30, "Mistral"),
    (31, "Groq"),
    (32, "AWS Bedrock"),
    (33, "01.AI"),
    (34, "Midjourney"),
    (35, "Cloudflare"),
    (36, "Cohere"),
    (37, "Stability AI"),
    (38, "Coze"),
    (39, "Ollama"),
    (40, "Hunyuan"),
    (41, "Suno"),
    (42, "Vertex AI"),
    (44, "Ideogram"),
    (45, "SiliconFlow"),
    (46, "Flux"),
    (47, "Jina"),
    (49, "xAI"),
];

/// Inserts the built-in owners that are missing (never touches existing rows).
pub fn seed_built_in(conn: &mut DbConn) -> StoreResult<usize> {
    let existing: Vec<i64> = model_owners::table.select(model_owners::id).load(conn)?;
    let t = now();
    let mut added = 0;
    for (id, name) in BUILT_IN.iter().filter(|(id, _)| !existing.contains(id)) {
        diesel::insert_into(model_owners::table)
            .values((
                model_owners::id.eq(id),
                model_owners::name.eq(name),
                model_owners::icon.eq(""),
                model_owners::created_at.eq(t),
                model_owners::updated_at.eq(t),
            ))
            .execute(conn)?;
        added += 1;
    }
    Ok(added)
}

pub fn find(conn: &mut DbConn, id: i64) -> StoreResult<ModelOwnerRow> {
    Ok(model_owners::table
        .find(id)
        .select(ModelOwnerRow::as_select())
        .first(conn)?)
}

pub fn insert(conn: &mut DbConn, id: i64, name: &str, icon: &str) -> StoreResult<()> {
    let t = now();
    diesel::insert_into(model_owners::table)
        .values((
            model_owners::id.eq(id),
            model_owners::name.eq(name),
            model_owners::icon.eq(icon),
            model_owners::created_at.eq(t),
            model_owners::updated_at.eq(t),
        ))
        .execute(conn)?;
    Ok(())
}

pub fn update(conn: &mut DbConn, id: i64, name: &str, icon: &str) -> StoreResult<()> {
    let n = diesel::update(model_owners::table.find(id))
        .set((
            model_owners::name.eq(name),
            model_owners::icon.eq(icon),
            model_owners::updated_at.eq(now()),
        ))
        .execute(conn)?;
    if n == 0 {
        return Err(crate::StoreError::NotFound);
    }
    Ok(())
}

pub fn delete(conn: &mut DbConn, id: i64) -> StoreResult<()> {
    let n = diesel::delete(model_owners::table.find(id)).execute(conn)?;
    if n == 0 {
        return Err(crate::StoreError::NotFound);
    }
    Ok(())
}
