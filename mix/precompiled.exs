Code.require_file("target.exs", __DIR__)

defmodule RustyJson.Precompiled do
  @moduledoc false
  # Precompiled NIFs for `mix compile` (loaded by mix.exs): which artifact the running VM needs (its architecture
  # and libc, and the highest NIF version the checksum file has that the VM loads), where it comes from (a cache
  # under the user's cache directory, else the base URL: https, a `file://` URL or a local directory), and its
  # SHA-256 checked against the checksum file before anything is extracted, cached or installed. Only the library
  # is extracted, from an archive that unpacks to at most @max_unpacked_bytes, and only a shared object for the
  # archive's target is installed. A stamp beside the installed library lets the next compile do nothing.
  #
  # Artifacts are named as rustler_precompiled names them (mix/target.exs):
  # `librustyjson_nif-v{version}-nif-{nif_version}-{target}.so.tar.gz` holding `librustyjson_nif.so` (Linux,
  # macOS), `rustyjson_nif-v{version}-nif-{nif_version}-{target}.dll.tar.gz` holding `rustyjson_nif.dll`
  # (Windows); a library named as the archive is, less `.tar.gz` (rustler_precompiled's own), is taken too.

  alias RustyJson.Precompiled.Target

  @checksum_file "checksum-Elixir.RustyJson.Native.exs"
  @attempts 3
  # The most an archive may unpack to: the library is about 1.3 MB (a release build), so this leaves it room to
  # grow fifty-fold while bounding what `mix compile` inflates and holds in memory for one listed archive.
  @max_unpacked_bytes 64 * 1024 * 1024

  @doc "The checksum file's name (beside mix.exs)."
  def checksum_file, do: @checksum_file

  @doc "The artifact's file name for `version`, `nif_version` and `target` (`Target.artifact_name/3`)."
  defdelegate artifact_name(version, nif_version, target), to: Target

  @doc """
  The running VM's target triple (`x86_64-unknown-linux-gnu`, `aarch64-apple-darwin`, `x86_64-pc-windows-msvc`,
  ...: the first of `Target.host/1`), or nil where no artifact is made (other systems).
  """
  def target, do: List.first(Target.host(Target.vm_info()))

  @doc """
  The artifact in `checksums` (a map of file name to `"sha256:<hex>"`) for the first of `targets` (a triple or a
  list of them, best first) that has one: `{name, sha256}` of the highest NIF version listed for it that the VM
  loads, or nil.
  """
  def pick(checksums, version, targets) do
    Enum.find_value(List.wrap(targets), fn target -> pick_one(checksums, version, target) end)
  end

  defp pick_one(checksums, version, target) do
    vm = :erlang.system_info(:nif_version) |> List.to_string() |> parse_version()
    prefix = Target.artifact_prefix(version, target)
    suffix = String.replace_prefix(artifact_name(version, "", target), prefix, "")

    checksums
    |> Enum.flat_map(fn {name, sum} ->
      with true <- String.starts_with?(name, prefix) and String.ends_with?(name, suffix),
           nif = name |> String.replace_prefix(prefix, "") |> String.replace_suffix(suffix, ""),
           {:ok, nif_version} <- {:ok, parse_version(nif)},
           true <- nif_version != nil and nif_version <= vm do
        [{nif_version, name, sum}]
      else
        _ -> []
      end
    end)
    |> Enum.max(fn -> nil end)
    |> case do
      nil -> nil
      {_, name, "sha256:" <> hex} -> {name, String.downcase(hex)}
      {_, name, hex} -> {name, String.downcase(hex)}
    end
  end

  defp parse_version(text) do
    case String.split(text, ".") do
      [major, minor] ->
        with {major, ""} <- Integer.parse(major), {minor, ""} <- Integer.parse(minor) do
          {major, minor}
        else
          _ -> nil
        end

      _ ->
        nil
    end
  end

  @doc """
  The checksums in the checksum file at `path` (empty when it is missing): a map of archive name to
  `"sha256:<64 hex digits>"`, written as a literal map of strings. The file is parsed, not run; anything else
  in it raises one `Mix.Error` naming the file and what is wrong.
  """
  def read_checksums(path) do
    case File.read(path) do
      {:ok, text} -> parse_checksums(text, path)
      {:error, :enoent} -> %{}
      {:error, reason} -> malformed!(path, "it cannot be read: #{:file.format_error(reason)}")
    end
  end

  defp parse_checksums(text, path) do
    unless String.valid?(text), do: malformed!(path, "it is not UTF-8 text")

    case Code.string_to_quoted(text, file: path) do
      {:ok, {:%{}, _, pairs}} ->
        Enum.reduce(pairs, %{}, fn pair, acc -> put_checksum(acc, pair, path) end)

      {:ok, {:__block__, _, []}} ->
        malformed!(path, "it is empty; it should be a map of archive names to \"sha256:<hex>\"")

      {:ok, quoted} ->
        malformed!(
          path,
          "it should be a map of archive names to \"sha256:<hex>\", not #{snippet(quoted)}"
        )

      {:error, {location, message, token}} ->
        malformed!(
          path,
          "syntax error on line #{line(location)}: #{syntax_message(message, token)}"
        )
    end
  end

  defp put_checksum(acc, {name, sum}, path) when is_binary(name) and is_binary(sum) do
    cond do
      not Regex.match?(~r/\A(sha256:)?[0-9a-fA-F]{64}\z/, sum) ->
        malformed!(
          path,
          "the checksum of #{inspect(name)} is #{inspect(sum)}, not \"sha256:\" and 64 hex digits"
        )

      Map.has_key?(acc, name) ->
        malformed!(path, "#{inspect(name)} is listed twice")

      true ->
        Map.put(acc, name, sum)
    end
  end

  defp put_checksum(_acc, {name, sum}, path) do
    malformed!(
      path,
      "the entry #{snippet(name)} => #{snippet(sum)} is not a string => string pair"
    )
  end

  defp malformed!(path, what),
    do: Mix.raise("the checksum file #{@checksum_file} (#{path}) is malformed: #{what}")

  defp snippet(quoted) do
    text = Macro.to_string(quoted)
    if String.length(text) > 120, do: String.slice(text, 0, 120) <> "...", else: text
  end

  defp line(location) when is_list(location), do: Keyword.get(location, :line, "?")
  defp line(location), do: location

  # Elixir's parser gives a message and the token it stopped at; some messages come as {prefix, suffix}.
  defp syntax_message({prefix, suffix}, token) when is_binary(prefix) and is_binary(suffix),
    do: prefix <> to_string(token) <> suffix

  defp syntax_message(message, token) when is_binary(message), do: message <> to_string(token)
  defp syntax_message(message, token), do: inspect({message, token})

  @doc """
  Installs the artifact `name` (SHA-256 `sha256`) at `dest`: from the cache, else from `base_url` (then cached),
  and writes a stamp beside it naming the target, the archive, its SHA-256 and the library's. Returns `:noop`, touching
  neither the cache nor the network, when the stamp says this archive is installed and the library still has the
  stamped SHA-256; `:ok` once installed; or `{:error, message}` when it could not be had or was refused (a
  checksum mismatch raises: nothing is used). `max_unpacked_bytes:` caps what the archive may unpack to.
  """
  def install(name, sha256, base_url, cache_dir, dest, opts \\ []) do
    cached = Path.join(cache_dir, name)
    max_unpacked = Keyword.get(opts, :max_unpacked_bytes, @max_unpacked_bytes)

    with {:ok, target} <- archive_target(name),
         false <- installed?(dest, name, sha256),
         {:ok, archive, source} <- cached_or_fetched(cached, name, base_url),
         :ok <- verify!(archive, sha256, name, source),
         :ok <- cache(cached, archive, source),
         {:ok, library} <- extract(archive, name, target, max_unpacked),
         :ok <- check_shared_object(library, name, target) do
      _ = write_atomically(dest, library)
      _ = write_atomically(stamp_path(dest), stamp(name, sha256, sha256_hex(library)))
      :ok
    else
      true -> :noop
      {:error, _} = error -> error
    end
  end

  @doc """
  Whether `dest` holds what installing the archive `name` (SHA-256 `sha256`) gives: its stamp names them and the
  library's SHA-256 is the stamped one (a library replaced or damaged since is installed again).
  """
  def installed?(dest, name, sha256) do
    with {:ok, stamp} <- File.read(stamp_path(dest)),
         true <- available?(:crypto),
         {:ok, library} <- File.read(dest) do
      stamp == stamp(name, sha256, sha256_hex(library))
    else
      _ -> false
    end
  end

  @doc "Removes the stamp of `dest` (a library built with cargo is not a precompiled one)."
  def remove_stamp(dest) do
    _ = File.rm(stamp_path(dest))
    :ok
  end

  @doc "The stamp's path beside the library at `dest`."
  def stamp_path(dest), do: dest <> ".stamp"

  defp stamp(name, sha256, library_sha256) do
    """
    # Written by RustyJson's mix compile: the precompiled NIF installed here. Compiles do nothing while it holds.
    target #{Target.of_artifact(name)}
    archive #{name}
    archive_sha256 #{sha256}
    library_sha256 #{library_sha256}
    """
  end

  defp sha256_hex(bytes), do: :crypto.hash(:sha256, bytes) |> Base.encode16(case: :lower)

  defp cached_or_fetched(cached, name, base_url) do
    case File.read(cached) do
      {:ok, archive} -> {:ok, archive, {:cache, cached}}
      {:error, _} -> fetch(base_url, name)
    end
  end

  @doc "The archive `name` from `base_url`: an https/http URL, a `file://` URL or a local directory."
  def fetch(base_url, name) do
    url = String.trim_trailing(base_url, "/") <> "/" <> name

    cond do
      String.starts_with?(base_url, "file://") ->
        read_local(String.replace_prefix(url, "file://", ""), url)

      String.starts_with?(base_url, ["http://", "https://"]) ->
        http_get(url, @attempts)

      true ->
        read_local(url, url)
    end
  end

  defp read_local(path, url) do
    case File.read(path) do
      {:ok, archive} -> {:ok, archive, {:url, url}}
      {:error, reason} -> {:error, "#{url}: #{:file.format_error(reason)}"}
    end
  end

  defp http_get(url, attempts) do
    for app <- [:inets, :ssl], available?(app), do: {:ok, _} = Application.ensure_all_started(app)
    set_proxies()

    request = {String.to_charlist(url), [{~c"user-agent", ~c"rusty_json mix compile"}]}

    http_options = [
      timeout: 60_000,
      connect_timeout: 15_000,
      ssl: tls_options(url),
      autoredirect: true
    ]

    case :httpc.request(:get, request, http_options, [body_format: :binary], :rusty_json) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        {:ok, body, {:url, url}}

      {:ok, {{_, status, _}, _headers, _body}} when status in 400..499 ->
        {:error, "#{url}: HTTP #{status}"}

      other when attempts > 1 ->
        Process.sleep(500 * (@attempts - attempts + 1))
        _ = other
        http_get(url, attempts - 1)

      {:ok, {{_, status, _}, _, _}} ->
        {:error, "#{url}: HTTP #{status}"}

      {:error, reason} ->
        {:error, "#{url}: #{inspect(reason)}"}
    end
  end

  # TLS peers are verified against the operating system's CA store, and the host name checked.
  defp tls_options(url) do
    host = url |> URI.parse() |> Map.get(:host, "") |> String.to_charlist()

    [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      server_name_indication: host,
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)],
      depth: 4
    ]
  end

  defp set_proxies do
    _ = :inets.start(:httpc, profile: :rusty_json)

    for {var, key} <- [{"HTTP_PROXY", :proxy}, {"HTTPS_PROXY", :https_proxy}],
        value = System.get_env(var) || System.get_env(String.downcase(var)),
        value not in [nil, ""],
        %URI{host: host, port: port} when is_binary(host) <- [URI.parse(value)] do
      :httpc.set_options([{key, {{String.to_charlist(host), port}, no_proxy()}}], :rusty_json)
    end

    :ok
  end

  defp no_proxy do
    (System.get_env("NO_PROXY") || System.get_env("no_proxy") || "")
    |> String.split(",", trim: true)
    |> Enum.map(&(&1 |> String.trim() |> String.to_charlist()))
  end

  # Mix (Elixir 1.15+) keeps only the project's own applications in the code path while it compiles: OTP's
  # crypto, inets and ssl are added back when the VM has them.
  defp available?(app) do
    if function_exported?(Mix, :ensure_application!, 1) do
      try do
        apply(Mix, :ensure_application!, [app])
      rescue
        _ -> :missing
      end
    end

    Code.ensure_loaded?(app) or match?({:ok, _}, :application.get_all_key(app))
  end

  defp verify!(archive, expected, name, source) do
    unless available?(:crypto) do
      Mix.raise(
        "verifying the precompiled RustyJson NIF #{name} needs OTP's crypto application (Debian: erlang-crypto); " <>
          "install it, or build from source with RUSTYJSON_BUILD=1"
      )
    end

    actual = sha256_hex(archive)

    if actual == expected do
      :ok
    else
      Mix.raise("""
      the precompiled RustyJson NIF #{name} from #{describe(source)} does not match the checksum file:
        expected sha256:#{expected}
        got      sha256:#{actual}
      Nothing was installed. Remove the file if it is a bad cached copy, check the base URL, or build from source \
      with RUSTYJSON_BUILD=1.\
      """)
    end
  end

  defp describe({:cache, path}), do: "the cache (#{path})"
  defp describe({:url, url}), do: url

  defp cache(_cached, _archive, {:cache, _}), do: :ok

  defp cache(cached, archive, _source) do
    _ = write_atomically(cached, archive)
    :ok
  end

  defp archive_target(name) do
    case Target.of_artifact(name) do
      nil -> {:error, "#{name} is not named as a precompiled NIF archive for any target"}
      target -> {:ok, target}
    end
  end

  # The library alone, from the archive unpacked in memory up to `max` bytes (an archive that unpacks to more is
  # refused before it is all inflated).
  defp extract(archive, name, target, max) do
    with {:ok, tar} <- gunzip(archive, name, max),
         {:ok, entries} <- table(tar, name),
         {:ok, path} <- library_entry(entries, name, target) do
      case :erl_tar.extract({:binary, tar}, [:memory, {:files, [path]}]) do
        {:ok, [{_, library}]} -> {:ok, library}
        other -> {:error, "#{name}: its #{path} could not be extracted: #{inspect(other)}"}
      end
    end
  end

  defp gunzip(archive, name, max) do
    z = :zlib.open()

    try do
      # 31: a gzip header and trailer around the deflate stream.
      :ok = :zlib.inflateInit(z, 31)
      inflate(z, :zlib.safeInflate(z, archive), [], 0, max, name)
    rescue
      e in ErlangError ->
        {:error, "#{name} is not a gzipped tar archive: #{inspect(e.original)}"}
    after
      :zlib.close(z)
    end
  end

  # safeInflate gives the output a piece at a time: the size is checked before the next piece is inflated.
  defp inflate(z, {state, piece}, acc, size, max, name) when state in [:continue, :finished] do
    size = size + IO.iodata_length(piece)

    cond do
      size > max ->
        {:error,
         "#{name} unpacks to more than #{format_bytes(max)}, the most a precompiled NIF archive may hold"}

      state == :continue ->
        inflate(z, :zlib.safeInflate(z, []), [acc | piece], size, max, name)

      true ->
        # :finished means the input is used up; inflateEnd raises data_error when the stream was cut short.
        :ok = :zlib.inflateEnd(z)
        {:ok, IO.iodata_to_binary([acc | piece])}
    end
  end

  defp inflate(_z, other, _acc, _size, _max, name),
    do: {:error, "#{name} is not a gzipped tar archive: #{inspect(elem(other, 0))}"}

  defp format_bytes(bytes) when rem(bytes, 1024 * 1024) == 0, do: "#{div(bytes, 1024 * 1024)} MiB"
  defp format_bytes(bytes), do: "#{bytes} bytes"

  defp table(tar, name) do
    case :erl_tar.table({:binary, tar}, [:verbose]) do
      {:ok, entries} -> {:ok, entries}
      {:error, reason} -> {:error, "#{name} is not a gzipped tar archive: #{inspect(reason)}"}
    end
  end

  # The first entry named like the library (or, as rustler_precompiled names it, like the archive less `.tar.gz`),
  # which must be a regular file (not a link or a directory).
  defp library_entry(entries, name, target) do
    names = [Target.library_name(target), String.replace_suffix(name, ".tar.gz", "")]

    case Enum.find(entries, fn entry -> Path.basename(to_string(elem(entry, 0))) in names end) do
      nil ->
        {:error, "#{name} holds no #{Target.library_name(target)}"}

      entry when elem(entry, 1) == :regular ->
        {:ok, elem(entry, 0)}

      entry ->
        {:error, "#{name}: its #{elem(entry, 0)} is a #{elem(entry, 1)}, not a regular file"}
    end
  end

  # The library must be a shared library for the archive's target (named in the archive's name), by its header:
  # a little-endian ELF shared object of the target's class and CPU, a Mach-O dylib, or a PE DLL.
  defp check_shared_object(library, name, target) do
    case Target.check_library(library, target) do
      :ok ->
        :ok

      {:error, what} ->
        {:error,
         "#{name} holds a #{Target.library_name(target)} that is not a shared object for its target: #{what}"}
    end
  end

  @doc """
  Writes `bytes` at `dest` (a library or an archive): `:noop` when it already holds them, else written beside and
  renamed, as a loaded library must never be overwritten in place.
  """
  def write_atomically(dest, bytes) do
    if File.read(dest) == {:ok, bytes} do
      :noop
    else
      File.mkdir_p!(Path.dirname(dest))
      tmp = dest <> ".tmp#{System.unique_integer([:positive])}"
      File.write!(tmp, bytes)
      File.rename!(tmp, dest)
      :ok
    end
  end
end
