// The Function App: Flex Consumption, Node 22, the user-assigned identity for everything (storage,
// the deployment package, Key Vault references, App Insights ingestion, the scheduler), and every app
// setting the app's schema requires (test/infra/template.test.ts runs the app's loadConfig on them).
import { tokenSecretName } from 'names.bicep'

param name string
param location string = resourceGroup().location
param tags object = {}
param serviceName string = 'api'
param applicationInsightsName string
param appServicePlanId string
param storageAccountName string
param deploymentStorageContainerName string
param identityId string
param identityClientId string
param keyVaultUri string
@description('The sites as SITES lists them.')
param sites array
param smartsheetBaseUrl string
param taskHubName string
@description('The app\'s own ALERT_WEBHOOK_URL; empty for none.')
param appAlertWebhookUrl string = ''
@description('The Durable Task Scheduler endpoint when that backend is chosen; empty for the Azure Storage provider.')
param durableTaskSchedulerEndpoint string = ''
param instanceMemoryMB int = 2048
param maximumInstanceCount int = 100

resource stg 'Microsoft.Storage/storageAccounts@2022-09-01' existing = {
  name: storageAccountName
}

resource applicationInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

// Identity-based AzureWebJobsStorage, as the host and the app both read it: service URIs, no key.
var storageSettings = {
  AzureWebJobsStorage__blobServiceUri: stg.properties.primaryEndpoints.blob
  AzureWebJobsStorage__queueServiceUri: stg.properties.primaryEndpoints.queue
  AzureWebJobsStorage__tableServiceUri: stg.properties.primaryEndpoints.table
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
}

var monitoringSettings = {
  APPLICATIONINSIGHTS_CONNECTION_STRING: applicationInsights.properties.ConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'Authorization=AAD;ClientId=${identityClientId}'
}

var sheetwrightSettings = {
  SITES: string(sites)
  SMARTSHEET_BASE_URL: smartsheetBaseUrl
  TASK_HUB_NAME: taskHubName
}

// One setting per site token, a Key Vault reference without a version: the platform resolves it
// (and a rotated secret, within a day or at a restart) before the app reads it.
var tokenSettings = toObject(
  union(map(sites, site => string(site.tokenSetting)), []),
  tokenSetting => tokenSetting,
  tokenSetting => '@Microsoft.KeyVault(SecretUri=${keyVaultUri}secrets/${tokenSecretName(tokenSetting)}/)'
)

var alertSettings = empty(appAlertWebhookUrl) ? {} : {
  ALERT_WEBHOOK_URL: appAlertWebhookUrl
}

var durableTaskSchedulerSettings = empty(durableTaskSchedulerEndpoint) ? {} : {
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${durableTaskSchedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
}

var appSettings = union(storageSettings, monitoringSettings, sheetwrightSettings, tokenSettings, alertSettings, durableTaskSchedulerSettings)

module api 'br/public:avm/res/web/site:0.15.1' = {
  name: '${serviceName}-flex-consumption'
  params: {
    kind: 'functionapp,linux'
    name: name
    location: location
    tags: union(tags, { 'azd-service-name': serviceName })
    serverFarmResourceId: appServicePlanId
    managedIdentities: {
      systemAssigned: false
      userAssignedResourceIds: [
        identityId
      ]
    }
    keyVaultAccessIdentityResourceId: identityId
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${stg.properties.primaryEndpoints.blob}${deploymentStorageContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
      }
      runtime: {
        name: 'node'
        version: '22'
      }
    }
    siteConfig: {
      alwaysOn: false
    }
    appSettingsKeyValuePairs: appSettings
  }
}

output SERVICE_API_NAME string = api.outputs.name
