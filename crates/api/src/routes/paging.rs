//! Paging of the management lists, and the one list handler they share: a list route checks its
//! query ([`Search`], declared by [`list_query`] or [`keyword_query`]), then [`list`] runs the store call on a
//! connection and answers the page in the envelope `{data, page, size, total_count}`
//! ([`page_json`]). [`one`] answers a single row the same way, and [`found_or`] / [`found`]
//! turn the store's "not found" into the resource's own.

use crate::error::{ok, ApiError, ApiResult};
use crate::AppState;
use actix_web::HttpResponse;
use serde_json::{json, Value};
use switchboard_domain::ErrorCode;
use switchboard_store::{DbConn, Page, PageReq, StoreResult};

pub const DEFAULT_PAGE_SIZE: i64 = 10;
pub const MAX_PAGE_SIZE: i64 = 100;

/// Validates page/size (1-based page; size 1..=100, default 10; the row offset must not overflow).
pub fn page_req(page: Option<i64>, size: Option<i64>) -> ApiResult<PageReq> {
    let page = page.unwrap_or(1);
    let size = size.unwrap_or(DEFAULT_PAGE_SIZE);
    if page < 1 {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidPage,
            "page must be 1 or more",
        ));
    }
    if !(1..=MAX_PAGE_SIZE).contains(&size) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidSize,
            format!("size must be between 1 and {MAX_PAGE_SIZE}"),
        ));
    }
    // The row offset, (page - 1) * size, must exist: a huge page would overflow it.
    if (page - 1).checked_mul(size).is_none() {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidPage,
            "page is too large",
        ));
    }
    Ok(PageReq { page, size })
}

/// The list envelope of the API conventions: `{data, page, size, total_count}`.
pub fn page_json(data: Vec<Value>, page: PageReq, total: i64) -> Value {
    json!({"data": data, "page": page.page, "size": page.size, "total_count": total})
}

/// Validates an `order` parameter against an allow-list (`field` or `-field`).
pub fn order_param(order: Option<String>, allowed: &[&str], default: &str) -> ApiResult<String> {
    let order = order
        .filter(|o| !o.is_empty())
        .unwrap_or_else(|| default.to_owned());
    let field = order.strip_prefix('-').unwrap_or(&order);
    if !allowed.contains(&field) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidOrder,
            format!(
                "cannot order by {field:?}; use one of {}",
                allowed.join(", ")
            ),
        ));
    }
    Ok(order)
}

/// What every list query has: the page, its size, a search keyword and (on a sortable list)
/// the order.
pub struct SearchFields {
    pub page: Option<i64>,
    pub size: Option<i64>,
    pub keyword: Option<String>,
    pub order: Option<String>,
}

/// A list query declared by [`list_query`] or [`keyword_query`].
pub trait Searched {
    /// Its paging fields (the keyword and the order taken out).
    fn search_fields(&mut self) -> SearchFields;
}

/// Declares the query of a sortable management list: `page`, `size`, `keyword` and `order`,
/// then the list's own filters; [`Search::sorted`] checks it.
macro_rules! list_query {
    ($(#[$attr:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $crate::routes::paging::list_query!(@define [] $(#[$attr])* pub struct $name { $($body)* });
    };
    // `$order`: the attributes of the `order` field.
    (@define [$($order:meta),*] $(#[$attr:meta])* pub struct $name:ident {
        $($(#[$fattr:meta])* $field:ident: $ty:ty,)*
    }) => {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        $(#[$attr])*
        pub struct $name {
            page: Option<i64>,
            size: Option<i64>,
            keyword: Option<String>,
            $(#[$order])*
            order: Option<String>,
            $($(#[$fattr])* $field: $ty,)*
        }

        impl $crate::routes::paging::Searched for $name {
            fn search_fields(&mut self) -> $crate::routes::paging::SearchFields {
                $crate::routes::paging::SearchFields {
                    page: self.page,
                    size: self.size,
                    keyword: self.keyword.take(),
                    order: self.order.take(),
                }
            }
        }
    };
}
pub(crate) use list_query;

/// Declares the query of a list searched by keyword only: `page`, `size` and `keyword` (no
/// `order`: it is neither read nor documented); [`Search::unsorted`] checks it.
macro_rules! keyword_query {
    ($(#[$attr:meta])* pub struct $name:ident;) => {
        $crate::routes::paging::list_query!(
            @define [serde(skip), schemars(skip)] $(#[$attr])* pub struct $name {}
        );
    };
}
pub(crate) use keyword_query;

/// The page, the order and the keyword of a list query, checked.
pub struct Search {
    pub page: PageReq,
    pub order: String,
    pub keyword: Option<String>,
}

impl Search {
    /// A sortable list: the page ([`page_req`]), then the order ([`order_param`]); the keyword
    /// trimmed.
    pub fn sorted(q: &mut impl Searched, allowed: &[&str], default: &str) -> ApiResult<Search> {
        let f = q.search_fields();
        let page = page_req(f.page, f.size)?;
        let order = order_param(f.order, allowed, default)?;
        let keyword = f.keyword.map(|k| k.trim().to_owned());
        Ok(Search {
            page,
            order,
            keyword,
        })
    }

    /// A list searched by keyword only: the page; the keyword as given.
    pub fn unsorted(q: &mut impl Searched) -> ApiResult<Search> {
        let f = q.search_fields();
        Ok(Search {
            page: page_req(f.page, f.size)?,
            order: String::new(),
            keyword: f.keyword,
        })
    }

    /// The keyword as the stores take it.
    pub fn keyword(&self) -> Option<&str> {
        self.keyword.as_deref()
    }
}

/// A query parameter given as text: trimmed, `None` when empty.
pub fn text(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// A whole-number query parameter given as text (`name` for the message); `None` when empty.
pub fn int(name: &str, v: &Option<String>) -> ApiResult<Option<i64>> {
    match text(v) {
        None => Ok(None),
        Some(s) => s.parse::<i64>().map(Some).map_err(|_| {
            ApiError::bad_request(
                ErrorCode::InvalidQuery,
                format!("{name} must be an integer, not {s:?}"),
            )
        }),
    }
}

/// The list handler: `fetch` reads page `page` on a connection, `render` shows each row, and
/// the answer is the envelope of [`page_json`].
pub async fn list<T, F>(
    state: &AppState,
    page: PageReq,
    render: impl Fn(&T) -> Value,
    fetch: F,
) -> ApiResult<HttpResponse>
where
    F: FnOnce(&mut DbConn) -> ApiResult<Page<T>> + Send + 'static,
    T: Send + 'static,
{
    Ok(ok(list_json(state, page, render, fetch).await?))
}

/// [`list`]'s envelope, for a list that adds fields of its own to it.
pub async fn list_json<T, F>(
    state: &AppState,
    page: PageReq,
    render: impl Fn(&T) -> Value,
    fetch: F,
) -> ApiResult<Value>
where
    F: FnOnce(&mut DbConn) -> ApiResult<Page<T>> + Send + 'static,
    T: Send + 'static,
{
    let result = state.db(fetch).await?;
    let data: Vec<Value> = result.items.iter().map(render).collect();
    Ok(page_json(data, page, result.total))
}

/// One row: `fetch` reads it on a connection (its own "not found"), `render` shows it.
pub async fn one<T, F>(
    state: &AppState,
    render: impl Fn(&T) -> Value,
    fetch: F,
) -> ApiResult<HttpResponse>
where
    F: FnOnce(&mut DbConn) -> ApiResult<T> + Send + 'static,
    T: Send + 'static,
{
    let row = state.db(fetch).await?;
    Ok(ok(render(&row)))
}

/// A store result whose "not found" is `missing` (the resource's own 404); other errors as they
/// are.
pub fn found_or<T>(r: StoreResult<T>, missing: fn() -> ApiError) -> ApiResult<T> {
    r.map_err(|e| {
        if e.is_not_found() {
            missing()
        } else {
            e.into()
        }
    })
}

/// A row that may not exist: `None` for "not found", other errors as they are.
pub fn found<T>(r: StoreResult<T>) -> ApiResult<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e.into()),
    }
}
