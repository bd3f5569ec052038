//! Serves the built console (`frontend/dist`): real files as they are, every other non-API path
//! gets `index.html` so the client-side router can take it.

use actix_files::{Files, NamedFile};
use actix_web::dev::{fn_service, ServiceRequest, ServiceResponse};
use actix_web::{HttpResponse, Responder};
use std::path::{Path, PathBuf};

pub fn service(dir: &Path) -> Files {
    let index: PathBuf = dir.join("index.html");
    Files::new("/", dir)
        .index_file("index.html")
        .use_etag(true)
        .default_handler(fn_service(move |req: ServiceRequest| {
            let index = index.clone();
            async move {
                let (req, _) = req.into_parts();
                match NamedFile::open_async(&index).await {
                    Ok(f) => {
                        let res = f
                            .use_etag(false)
                            .use_last_modified(false)
                            .customize()
                            .insert_header(("Cache-Control", "no-cache"))
                            .respond_to(&req)
                            .map_into_boxed_body();
                        Ok(ServiceResponse::new(req, res))
                    }
                    Err(_) => Ok(ServiceResponse::new(req, no_console())),
                }
            }
        }))
}

pub fn no_console() -> HttpResponse {
    HttpResponse::NotFound().content_type("text/plain; charset=utf-8").body(
        "The console is not built. Run `make run` (or `npm --prefix frontend ci && npm --prefix frontend run build`) and set FRONTEND_DIR.",
    )
}
