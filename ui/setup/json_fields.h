#pragma once
// Reading and writing config fields by their dotted path ("optim.lr"), the names configErrors
// reports, so a widget, its JSON field and its error message share one key.
#include <QString>

#include <nlohmann/json.hpp>

namespace wb::ui {

nlohmann::json::json_pointer fieldPointer(const QString& dotted);

// doc at the dotted path, or fallback when absent.
nlohmann::json fieldValue(const nlohmann::json& doc, const QString& dotted, const nlohmann::json& fallback = nullptr);
QString fieldString(const nlohmann::json& doc, const QString& dotted, const QString& fallback = {});
double fieldNumber(const nlohmann::json& doc, const QString& dotted, double fallback);
bool fieldBool(const nlohmann::json& doc, const QString& dotted, bool fallback);

void setField(nlohmann::json& doc, const QString& dotted, nlohmann::json value);

// A field of doc, or wb::Config's own default where doc lacks it or holds another type: the
// window has no defaults of its own.
const nlohmann::json& defaultConfig();
double configNumber(const nlohmann::json& doc, const QString& dotted);
QString configString(const nlohmann::json& doc, const QString& dotted);
bool configBool(const nlohmann::json& doc, const QString& dotted);

// Number typed by the user: a JSON number when the text is one (C locale or the user's), else
// the text as a JSON string — configErrors then names the field ("must be a number").
nlohmann::json numberOrText(const QString& text);

}  // namespace wb::ui
