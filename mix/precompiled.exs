defmodule RustyJson.Precompiled do
  @moduledoc false
  # Precompiled NIFs for `mix compile` (loaded by mix.exs): which artifact the running VM needs (its architecture
  # and libc, and the highest NIF version the checksum file has that the VM loads), where it comes from (a cache
  # under the user's cache directory, else the base URL: https, a `file://` URL or a local directory), and its
  # SHA-256 checked against the checksum file before anything is extracted, cached or installed.
  #
  # Artifacts are named as the ecosystem's precompiled NIFs are:
  # `librustyjson_nif-v{version}-nif-{nif_version}-{target}.so.tar.gz`, each holding `librustyjson_nif.so`.

  @checksum_file "checksum-Elixir.RustyJson.Native.exs"
  @library "librustyjson_nif.so"
  @attempts 3

  @doc "The checksum file's name (beside mix.exs)."
  def checksum_file, do: @checksum_file

  @doc "The artifact's file name for `version`, `nif_version` and `target`."
  def artifact_name(version, nif_version, target),
    do: "librustyjson_nif-v#{version}-nif-#{nif_version}-#{target}.so.tar.gz"

  @doc """
  The running VM's target triple (`x86_64-unknown-linux-gnu`, `aarch64-unknown-linux-musl`, ...), or nil where no
  artifact is made (other systems).
  """
  def target do
    arch = :erlang.system_info(:system_architecture) |> List.to_string()

    with [cpu | _] <- String.split(arch, "-"),
         cpu when cpu in ["x86_64", "aarch64"] <- normalize_cpu(cpu),
         true <- String.contains?(arch, "linux") do
      libc = if String.contains?(arch, "musl") or musl_vm?(), do: "musl", else: "gnu"
      "#{cpu}-unknown-linux-#{libc}"
    else
      _ -> nil
    end
  end

  defp normalize_cpu("arm64"), do: "aarch64"
  defp normalize_cpu("amd64"), do: "x86_64"
  defp normalize_cpu(cpu), do: cpu

  # Whether the running VM is linked with musl (its triple does not always say): the libraries it has mapped tell,
  # not which loaders the system has installed.
  defp musl_vm? do
    case File.read("/proc/self/maps") do
      {:ok, maps} -> String.contains?(maps, "ld-musl") or String.contains?(maps, "libc.musl")
      {:error, _} -> false
    end
  end

  @doc """
  The artifact for this VM in `checksums` (a map of file name to `"sha256:<hex>"`): `{name, sha256}` of the highest
  NIF version it has for `target` that the VM loads, or nil.
  """
  def pick(checksums, version, target) do
    vm = :erlang.system_info(:nif_version) |> List.to_string() |> parse_version()
    prefix = "librustyjson_nif-v#{version}-nif-"
    suffix = "-#{target}.so.tar.gz"

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

  @doc "The checksums in the checksum file at `path` (empty when it is missing)."
  def read_checksums(path) do
    if File.exists?(path) do
      {map, _} = Code.eval_file(path)
      map
    else
      %{}
    end
  end

  @doc """
  Installs the artifact `name` (SHA-256 `sha256`) at `dest`: from the cache, else from `base_url` (then cached).
  Returns `:ok`, or `{:error, message}` when it could not be had (a checksum mismatch raises: nothing is used).
  """
  def install(name, sha256, base_url, cache_dir, dest) do
    cached = Path.join(cache_dir, name)

    with {:ok, archive, source} <- cached_or_fetched(cached, name, base_url),
         :ok <- verify!(archive, sha256, name, source),
         :ok <- cache(cached, archive, source),
         {:ok, library} <- extract(archive, name) do
      _ = write_atomically(dest, library)
      :ok
    end
  end

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

    actual = :crypto.hash(:sha256, archive) |> Base.encode16(case: :lower)

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

  defp extract(archive, name) do
    case :erl_tar.extract({:binary, archive}, [:compressed, :memory]) do
      {:ok, files} ->
        case Enum.find(files, fn {path, _} -> Path.basename(to_string(path)) == @library end) do
          {_, library} -> {:ok, library}
          nil -> {:error, "#{name} holds no #{@library}"}
        end

      {:error, reason} ->
        {:error, "#{name} is not a gzipped tar archive: #{inspect(reason)}"}
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
